// Users of the caller's organization: list, read, create, edit, deactivate/reactivate, delete.
// Role rules: the owner role is never granted or taken away; only the owner grants or removes the
// admin role; nobody changes their own role. Deleting a user first settles the records they own.
// This file declares the tools; the data functions and the rules are store.ts.
import { z } from 'zod';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import {
  emailField,
  getLiveUser,
  nameField,
  passwordField,
  roleField,
  serializeUser,
  userSchema,
} from '../../core/users.ts';
import {
  createOrgUser,
  deactivateOrgUser,
  deleteOrgUser,
  GRANTABLE_ROLES,
  listUserPage,
  reactivateOrgUser,
  writeUser,
} from './store.ts';

const grantableRole = z
  .enum(GRANTABLE_ROLES, {
    error: 'must be admin, manager, member or viewer (the owner role cannot be granted)',
  })
  .describe(
    'Role: admin, manager, member or viewer. Only the owner may grant admin; owner is never granted.',
  );

const userId = objectId('user');
const userOutput = z.object({ user: userSchema });

export const listUsers = defineTool({
  name: 'list_users',
  title: 'List users',
  description:
    "Lists the users of the organization by role, status or a name or email search; use it to find a user's `_id` for owner fields. Paged.",
  input: z.strictObject({
    ...listParams(['created_at', 'name', 'email', 'role']),
    role: roleField.optional().describe('Only users with this role'),
    status: z.enum(['active', 'deactivated']).optional().describe('Only active or only deactivated users'),
  }),
  output: pagedOutput('users', userSchema),
  access: { kind: 'read', resource: 'users', permission: 'users.view' },
  async handler(input, ctx) {
    return listUserPage(ctx.db, ctx.auth.orgId, input);
  },
});

export const getUser = defineTool({
  name: 'get_user',
  title: 'Get user',
  description:
    'Returns one user of the organization by id: email, name, role, status (active or deactivated). Deleted users and other organizations\' users are "Not found".',
  input: z.strictObject({ id: userId }),
  output: userOutput,
  access: { kind: 'read', resource: 'users', permission: 'users.view' },
  async handler(input, ctx) {
    return { user: serializeUser(await getLiveUser(ctx.db, ctx.auth.orgId, input.id)) };
  },
});

export const createUser = defineTool({
  name: 'create_user',
  title: 'Create user',
  errors: [{ code: 'conflict', when: 'a user with this email already exists' }],
  description:
    'Invites a new user (a team member) to the organization with a role and an initial password to sign in with. Only the owner may create admins; the owner role cannot be granted.',
  input: z.strictObject({
    email: emailField,
    name: nameField,
    role: grantableRole,
    password: passwordField,
  }),
  output: userOutput,
  access: { kind: 'write', resource: 'users', permission: 'users.create' },
  toolset: 'admin',
  async handler(input, ctx) {
    return { user: await createOrgUser(ctx, input) };
  },
});

export const updateUser = defineTool({
  name: 'update_user',
  title: 'Update user',
  errors: [{ code: 'invalid_operation', when: "changing your own role or the owner's role" }],
  description:
    "Changes a user's name and/or role; fields left out stay as they are. Role rules: the owner's role never changes, nobody changes their own role, the owner role cannot be granted (400), and only the owner may grant or remove the admin role (403 with required_permission users.delete).",
  input: z.strictObject({
    id: userId,
    name: nameField.optional(),
    role: grantableRole.optional(),
  }),
  output: userOutput,
  access: { kind: 'write', resource: 'users', permission: 'users.edit' },
  annotations: { idempotentHint: true },
  toolset: 'admin',
  async handler(input, ctx) {
    return { user: await writeUser(ctx, input.id, input) };
  },
});

export const deactivateUser = defineTool({
  name: 'deactivate_user',
  title: 'Deactivate user',
  errors: [{ code: 'invalid_operation', when: 'deactivating yourself or the owner' }],
  description:
    'Blocks a user without deleting anything: they cannot sign in and all their tokens (sessions, API keys, OAuth tokens) are refused at once, until reactivate_user. Their records stay theirs. You cannot deactivate yourself or the owner. Deactivating a deactivated user changes nothing.',
  input: z.strictObject({ id: userId }),
  output: userOutput,
  access: { kind: 'write', resource: 'users', permission: 'users.deactivate' },
  annotations: { idempotentHint: true },
  toolset: 'admin',
  async handler(input, ctx) {
    return { user: await deactivateOrgUser(ctx, input.id) };
  },
});

export const reactivateUser = defineTool({
  name: 'reactivate_user',
  title: 'Reactivate user',
  description:
    'Lifts a deactivation: the user can sign in again and their unrevoked API keys work again. Reactivating an active user changes nothing.',
  input: z.strictObject({ id: userId }),
  output: userOutput,
  access: { kind: 'write', resource: 'users', permission: 'users.deactivate' },
  annotations: { idempotentHint: true },
  toolset: 'admin',
  async handler(input, ctx) {
    return { user: await reactivateOrgUser(ctx, input.id) };
  },
});

/** delete_user: `ownedTables` is every area's owned-record table (tools/index.ts collects them). */
export function deleteUserTool(ownedTables: readonly OwnedRecordTable[]) {
  return defineTool({
    name: 'delete_user',
    title: 'Delete user',
    errors: [
      { code: 'invalid_operation', when: 'deleting yourself or the owner' },
      { code: 'user_owns_records', when: 'the user still owns records and no heir was named' },
    ],
    description:
      "Deletes a user of the organization (owner only; not yourself). A user who owns records (leads) needs `transfer_to_user_id` (another active user gets them) or `acknowledge_data_deletion: true` (they go to the trash); without either it is a 400 `user_owns_records` with the counts; with both the transfer wins. The user's API keys and OAuth tokens are revoked and their email can be used again.",
    input: z.strictObject({
      id: userId,
      transfer_to_user_id: objectId('heir user')
        .optional()
        .describe("An active user of the organization who receives the deleted user's records"),
      acknowledge_data_deletion: z
        .boolean()
        .optional()
        .describe("true: move the deleted user's records to the trash instead of transferring them"),
    }),
    output: messageOutput,
    access: { kind: 'write', resource: 'users', permission: 'users.delete' },
    annotations: { destructiveHint: true },
    toolset: 'admin',
    async handler(input, ctx) {
      const outcome = await deleteOrgUser(ctx, ownedTables, input);
      return { message: `User deleted${outcome}` };
    },
  });
}
