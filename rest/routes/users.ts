import {
  createUser,
  deactivateUser,
  deleteUser,
  getUser,
  listUsers,
  reactivateUser,
  updateUser,
} from '../../tools/users.ts';
import { type Route, route } from '../route.ts';

export const userRoutes: Route[] = [
  route('GET', '/users', listUsers),
  route('POST', '/users', createUser),
  route('GET', '/users/:id', getUser),
  route('PUT', '/users/:id', updateUser),
  route('DELETE', '/users/:id', deleteUser),
  route('POST', '/users/:id/deactivate', deactivateUser),
  route('POST', '/users/:id/reactivate', reactivateUser),
];
