// Users of the caller's organization: list, read, create, edit, deactivate/reactivate, delete.
// Role rules: the owner role is never granted or taken away; only the owner grants or removes the
// admin role; nobody changes their own role. Deleting a user first settles the records they own.
import { and, asc, count, desc, eq, ilike, isNull, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { type Role, roleHas } from '../../core/access.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import { type UserRow, users } from '../../core/db/schema.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError } from '../../core/errors.ts';
import {
  countOwnedRecords,
  type OwnedRecordTable,
  transferOwnedRecords,
  trashOwnedRecords,
} from '../../core/ownership.ts';
import { listParams, messageOutput, objectId, offsetOf, paged, pagedOutput } from '../../core/schemas.ts';
import { defineTool, type ToolContext } from '../../core/tool.ts';
import {
  emailField,
  getLiveUser,
  insertUser,
  liveOrNotFound,
  lockLiveUser,
  lockUsers,
  nameField,
  passwordField,
  revokeUserCredentials,
  roleField,
  serializeUser,
  softDeleteUser,
  userSchema,
} from '../../core/users.ts';

const GRANTABLE_ROLES = ['admin', 'manager', 'member', 'viewer'] as const satisfies readonly Role[];

const grantableRole = z
  .enum(GRANTABLE_ROLES, {
    error: 'must be admin, manager, member or viewer (the owner role cannot be granted)',
  })
  .describe(
    'Role: admin, manager, member or viewer. Only the owner may grant admin; owner is never granted.',
  );

const userId = objectId('user');
const userOutput = z.object({ user: userSchema });

/** Holding users.delete marks the organization owner; granting or removing admin is reserved to it. */
function assertMayChangeAdmin(auth: AuthContext): void {
  if (!roleHas(auth.role, 'users.delete')) {
    throw new AppError('forbidden', {
      message: 'Only the owner can grant the admin role',
      extra: { required_permission: 'users.delete' },
    });
  }
}

function sortColumn(field: string): PgColumn {
  switch (field) {
    case 'name':
      return users.name;
    case 'email':
      return users.email;
    case 'role':
      return users.role;
    default:
      return users.createdAt;
  }
}

function orderFor(sort: string | undefined): SQL[] {
  if (!sort) return [desc(users.createdAt), desc(users.id)];
  const descending = sort.startsWith('-');
  const dir = descending ? desc : asc;
  // The id breaks ties so pages never overlap.
  return [dir(sortColumn(descending ? sort.slice(1) : sort)), dir(users.id)];
}

export const listUsers = defineTool({
  name: 'list_users',
  title: 'List users',
  description:
    "Lists the users of the caller's organization (deleted users never appear), newest first by default. Filter by `role` or `status`; `search` matches part of the name or email. Use it to find a user's `_id` (for owner_id and similar fields). Paged: returns `users` plus `total`, `page`, `limit`, `totalPages`; request page 1, then increment `page` until page >= totalPages. `limit` is 1-100 (default 25).",
  input: z.strictObject({
    ...listParams(['created_at', 'name', 'email', 'role']),
    role: roleField.optional().describe('Only users with this role'),
    status: z.enum(['active', 'deactivated']).optional().describe('Only active or only deactivated users'),
  }),
  output: pagedOutput('users', userSchema),
  access: { kind: 'read', resource: 'users', permission: 'users.view' },
  async handler(input, ctx) {
    const filters: (SQL | undefined)[] = [eq(users.orgId, ctx.auth.orgId), isNull(users.deletedAt)];
    if (input.role) filters.push(eq(users.role, input.role));
    if (input.status) filters.push(eq(users.status, input.status));
    if (input.search) {
      const pattern = `%${escapeLike(input.search)}%`;
      filters.push(or(ilike(users.name, pattern), ilike(users.email, pattern)));
    }
    const where = and(...filters);
    const [total] = await ctx.db.select({ n: count() }).from(users).where(where);
    const rows = await ctx.db
      .select()
      .from(users)
      .where(where)
      .orderBy(...orderFor(input.sort))
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('users', rows.map(serializeUser), total?.n ?? 0, input);
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
    "Adds a user to the caller's organization with an initial password they can sign in with. Owners and admins may call it. The role is admin, manager, member or viewer: the owner role cannot be granted (400), and only the owner may create admins (an admin gets 403 with required_permission users.delete). The email must not belong to any live user of the service (409).",
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
    if (input.role === 'admin') assertMayChangeAdmin(ctx.auth);
    const row = await insertUser(ctx.db, { orgId: ctx.auth.orgId, ...input });
    return { user: serializeUser(row) };
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
    const target = await lockLiveUser(ctx.db, ctx.auth.orgId, input.id);
    const changes: Partial<Pick<UserRow, 'name' | 'role' | 'updatedAt'>> = {};
    if (input.name !== undefined && input.name !== target.name) changes.name = input.name;
    if (input.role !== undefined && input.role !== target.role) {
      if (target.id === ctx.auth.userId) {
        throw new AppError('invalid_operation', { message: 'You cannot change your own role' });
      }
      if (target.role === 'owner') {
        throw new AppError('invalid_operation', { message: "The owner's role cannot be changed" });
      }
      if (input.role === 'admin' || target.role === 'admin') assertMayChangeAdmin(ctx.auth);
      changes.role = input.role;
    }
    if (Object.keys(changes).length === 0) return { user: serializeUser(target) };
    changes.updatedAt = ctx.now;
    const [row] = await ctx.db
      .update(users)
      .set(changes)
      .where(and(eq(users.id, target.id), eq(users.orgId, ctx.auth.orgId)))
      .returning();
    if (!row) throw new AppError('not_found', { message: 'User not found' });
    // The role is part of every cached credential of this user.
    if (changes.role !== undefined) {
      ctx.afterCommit(() => ctx.services.authCache.invalidate({ userIds: [row.id] }));
    }
    return { user: serializeUser(row) };
  },
});

/**
 * Moves a user to `status`. A status decides whether their tokens authenticate, so the change
 * also drops their cached credentials once the transaction commits.
 */
async function setStatus(
  ctx: ToolContext,
  target: UserRow,
  status: 'active' | 'deactivated',
): Promise<UserRow> {
  // Already in that state: nothing changes, so repeating the call is harmless.
  if (target.status === status) return target;
  const [row] = await ctx.db
    .update(users)
    .set({ status, deactivatedAt: status === 'deactivated' ? ctx.now : null, updatedAt: ctx.now })
    .where(and(eq(users.id, target.id), eq(users.orgId, target.orgId)))
    .returning();
  if (!row) throw new AppError('not_found', { message: 'User not found' });
  ctx.afterCommit(() => ctx.services.authCache.invalidate({ userIds: [target.id] }));
  return row;
}

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
    const target = await lockLiveUser(ctx.db, ctx.auth.orgId, input.id);
    if (target.id === ctx.auth.userId) {
      throw new AppError('invalid_operation', { message: 'You cannot deactivate yourself' });
    }
    if (target.role === 'owner') {
      throw new AppError('invalid_operation', { message: 'The organization owner cannot be deactivated' });
    }
    const row = await setStatus(ctx, target, 'deactivated');
    return { user: serializeUser(row) };
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
    const target = await lockLiveUser(ctx.db, ctx.auth.orgId, input.id);
    const row = await setStatus(ctx, target, 'active');
    return { user: serializeUser(row) };
  },
});

function heirError(message: string): AppError {
  return new AppError('validation_failed', {
    message: 'transfer_to_user_id is not a valid heir',
    details: [{ field: 'transfer_to_user_id', message, code: 'invalid_heir' }],
  });
}

/** The heir's locked row when it may receive the records: another live, active user of the organization. */
function assertHeir(heir: UserRow | undefined, deletedId: string): UserRow {
  if (heir?.id === deletedId) throw heirError('must be a different user than the one being deleted');
  if (!heir || heir.deletedAt !== null || heir.status !== 'active') {
    throw heirError('must be an active user of this organization');
  }
  return heir;
}

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
      "Deletes a user of the organization (owner only; you cannot delete yourself). If the user owns records (leads), say what happens to them: `transfer_to_user_id` gives them to another active user, or `acknowledge_data_deletion: true` moves them to the trash (restorable). Without either, a user who owns records is refused with 400 `user_owns_records` and the counts. If both are given, the transfer wins. The user's API keys and OAuth tokens are revoked, the user disappears from lists and their email can be used again. Check ownership first with list tools if unsure.",
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
      const { orgId, userId: callerId } = ctx.auth;
      if (input.id === callerId) {
        throw new AppError('invalid_operation', { message: 'You cannot delete yourself' });
      }
      // Both users are locked before anything is checked: a concurrent deletion of either (or of
      // this user with the heir the other way round) waits here and then sees the committed result,
      // so the loser gets a 404 or an invalid heir instead of handing records to a deleted user.
      const heirId = input.transfer_to_user_id;
      const locked = await lockUsers(ctx.db, orgId, heirId ? [input.id, heirId] : [input.id]);
      const target = liveOrNotFound(locked.get(input.id));
      if (target.role === 'owner') {
        throw new AppError('invalid_operation', { message: 'The organization owner cannot be deleted' });
      }
      const heir = heirId ? assertHeir(locked.get(heirId), target.id) : undefined;
      const owned = await countOwnedRecords(ownedTables, ctx.db, orgId, target.id);
      const total = Object.values(owned).reduce((sum, n) => sum + n, 0);
      let outcome = '';
      if (total > 0) {
        if (heir) {
          await transferOwnedRecords(ownedTables, ctx, target.id, heir.id);
          outcome = `; ${total} owned records transferred to user ${heir.id}`;
        } else if (input.acknowledge_data_deletion === true) {
          await trashOwnedRecords(ownedTables, ctx, target.id);
          outcome = `; ${total} owned records moved to the trash`;
        } else {
          throw new AppError('user_owns_records', {
            message: `User ${target.id} owns ${total} records; pass transfer_to_user_id or acknowledge_data_deletion`,
            extra: { owned_records: owned },
          });
        }
      }
      await softDeleteUser(ctx.db, orgId, target.id, ctx.now);
      await revokeUserCredentials(ctx.db, orgId, target.id, ctx.now);
      ctx.afterCommit(() => ctx.services.authCache.invalidate({ userIds: [target.id] }));
      return { message: `User deleted${outcome}` };
    },
  });
}
