// User routes: the organization's users, their roles and lifecycle.
import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import { createUser, deactivateUser, getUser, listUsers, reactivateUser, updateUser } from './tools.ts';

/** `deleteUser` is built with the registry of owned records (tools/users/index.ts). */
export function userRoutes(deleteUser: Tool): Route[] {
  return [
    route('GET', '/users', listUsers),
    route('POST', '/users', createUser),
    route('GET', '/users/:id', getUser),
    route('PUT', '/users/:id', updateUser),
    route('DELETE', '/users/:id', deleteUser),
    route('POST', '/users/:id/deactivate', deactivateUser),
    route('POST', '/users/:id/reactivate', reactivateUser),
  ];
}
