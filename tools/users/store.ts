// The users store: the organization's users as the tools list, create, change, deactivate and
// delete them, on the user functions of the kernel (core/users.ts: the record shape, lookups,
// locks, insert, soft delete). It holds the role rules (the owner role is never granted or taken
// away; only the owner grants or removes admin; nobody changes their own role), drops a user's
// cached credentials once a change that decides them commits, and settles the records a deleted
// user owns.
import { and, asc, count, desc, eq, ilike, isNull, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { type Role, roleHolds } from '../../core/access.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { type UserRow, users } from '../../core/db/schema.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError } from '../../core/errors.ts';
import {
  countOwnedRecords,
  type OwnedRecordTable,
  transferOwnedRecords,
  trashOwnedRecords,
} from '../../core/ownership.ts';
import { offsetOf, type Page, paged } from '../../core/schemas.ts';
import type { ToolContext } from '../../core/tool.ts';
import {
  insertUser,
  liveOrNotFound,
  lockLiveUser,
  lockUsers,
  revokeUserCredentials,
  serializeUser,
  softDeleteUser,
  type UserRecord,
} from '../../core/users.ts';
import { usersCatalogue } from './catalogue.ts';

export const GRANTABLE_ROLES = ['admin', 'manager', 'member', 'viewer'] as const satisfies readonly Role[];
type GrantableRole = (typeof GRANTABLE_ROLES)[number];

/** Holding users.delete marks the organization owner; granting or removing admin is reserved to it. */
function assertMayChangeAdmin(auth: AuthContext): void {
  if (!roleHolds(auth.role, usersCatalogue.permissions['users.delete'])) {
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

/** A page of the organization's live users; `search` matches part of the name or email. */
export async function listUserPage(
  db: Executor,
  orgId: string,
  input: Page & {
    sort?: string | undefined;
    search?: string | undefined;
    role?: Role | undefined;
    status?: 'active' | 'deactivated' | undefined;
  },
) {
  const filters: (SQL | undefined)[] = [eq(users.orgId, orgId), isNull(users.deletedAt)];
  if (input.role) filters.push(eq(users.role, input.role));
  if (input.status) filters.push(eq(users.status, input.status));
  if (input.search) {
    const pattern = `%${escapeLike(input.search)}%`;
    filters.push(or(ilike(users.name, pattern), ilike(users.email, pattern)));
  }
  const where = and(...filters);
  const [total] = await db.select({ n: count() }).from(users).where(where);
  const rows = await db
    .select()
    .from(users)
    .where(where)
    .orderBy(...orderFor(input.sort))
    .limit(input.limit)
    .offset(offsetOf(input));
  return paged('users', rows.map(serializeUser), total?.n ?? 0, input);
}

/** A new user of the caller's organization; only the owner creates admins. */
export async function createOrgUser(
  ctx: Pick<ToolContext, 'db' | 'auth'>,
  input: { email: string; name: string; role: GrantableRole; password: string },
): Promise<UserRecord> {
  if (input.role === 'admin') assertMayChangeAdmin(ctx.auth);
  const row = await insertUser(ctx.db, { orgId: ctx.auth.orgId, ...input });
  return serializeUser(row);
}

/** Changes a user's name and/or role under the role rules; a role change drops their cached credentials. */
export async function writeUser(
  ctx: ToolContext,
  id: string,
  input: { name?: string | undefined; role?: GrantableRole | undefined },
): Promise<UserRecord> {
  const target = await lockLiveUser(ctx.db, ctx.auth.orgId, id);
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
  if (Object.keys(changes).length === 0) return serializeUser(target);
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
  return serializeUser(row);
}

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

/** Deactivates a user; neither the caller nor the owner can be deactivated. */
export async function deactivateOrgUser(ctx: ToolContext, id: string): Promise<UserRecord> {
  const target = await lockLiveUser(ctx.db, ctx.auth.orgId, id);
  if (target.id === ctx.auth.userId) {
    throw new AppError('invalid_operation', { message: 'You cannot deactivate yourself' });
  }
  if (target.role === 'owner') {
    throw new AppError('invalid_operation', { message: 'The organization owner cannot be deactivated' });
  }
  const row = await setStatus(ctx, target, 'deactivated');
  return serializeUser(row);
}

export async function reactivateOrgUser(ctx: ToolContext, id: string): Promise<UserRecord> {
  const target = await lockLiveUser(ctx.db, ctx.auth.orgId, id);
  const row = await setStatus(ctx, target, 'active');
  return serializeUser(row);
}

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

/**
 * Deletes a user after settling the records they own in `ownedTables` (every area's owned-record
 * table): transferred to the heir, else trashed when acknowledged, else refused with the counts.
 * Returns what became of the records, as the end of the tool's message.
 */
export async function deleteOrgUser(
  ctx: ToolContext,
  ownedTables: readonly OwnedRecordTable[],
  input: {
    id: string;
    transfer_to_user_id?: string | undefined;
    acknowledge_data_deletion?: boolean | undefined;
  },
): Promise<string> {
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
  return outcome;
}
