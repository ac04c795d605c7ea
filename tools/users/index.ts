import { defineArea } from '../../core/area.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import { usersCatalogue } from './catalogue.ts';
import { userRoutes } from './routes.ts';
import {
  createUser,
  deactivateUser,
  deleteUserTool,
  getUser,
  listUsers,
  reactivateUser,
  updateUser,
} from './tools.ts';

/** The organization's users; deleting one hands their records (every area's `ownedRecords`) on. */
export function createUsersArea(owned: readonly OwnedRecordTable[]) {
  const deleteUser = deleteUserTool(owned);
  return defineArea({
    name: 'users',
    tools: [listUsers, getUser, createUser, updateUser, deactivateUser, reactivateUser, deleteUser],
    routes: userRoutes(deleteUser),
    tags: { users: 'Users of the organization and their roles.' },
    brings: usersCatalogue,
    permissions: ['users.view', 'users.create', 'users.edit', 'users.deactivate', 'users.delete'],
    events: [],
    toolsets: ['core', 'admin'],
  });
}
