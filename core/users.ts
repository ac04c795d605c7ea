// User records: the public shape, and the data functions signup, the admin API and the users tools
// share. Passwords are hashed here and never leave this module.
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import { ROLES, type Role } from './access.ts';
import { hashPassword } from './auth/passwords.ts';
import type { Executor } from './db/client.ts';
import { isUniqueViolation } from './db/errors.ts';
import { apiKeys, oauthTokens, refreshTokens, type UserRow, users } from './db/schema.ts';
import { AppError } from './errors.ts';
import { newId } from './ids.ts';
import { iso } from './schemas.ts';

export const emailField = z
  .string()
  .trim()
  .toLowerCase()
  .email()
  .max(254)
  .describe("The user's email address; unique across the service");
export const passwordField = z.string().min(8).max(200).describe('Password, 8 to 200 characters');
export const nameField = z.string().trim().min(1).max(200).describe("The person's display name");
export const roleField = z.enum(ROLES).describe('Role: owner, admin, manager, member or viewer');

export const userSchema = z
  .object({
    _id: z.string().describe('User id'),
    email: z.string().describe('Email address'),
    name: z.string().describe('Display name'),
    role: z.enum(ROLES).describe('Role in the organization'),
    status: z
      .enum(['active', 'deactivated'])
      .describe('A deactivated user cannot sign in and their tokens stop working'),
    organization_id: z.string().describe('The organization the user belongs to'),
    deactivated_at: z.string().nullable().describe('When the user was deactivated (ISO 8601), or null'),
    avatar_url: z
      .string()
      .nullable()
      .describe(
        "The user's picture: a stable URL that needs no token (an <img> src), redirecting to the stored image; null when none was set",
      ),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('A user of the organization');
export type UserRecord = z.infer<typeof userSchema>;

export function serializeUser(row: UserRow): UserRecord {
  return {
    _id: row.id,
    email: row.email,
    name: row.name,
    role: roleField.parse(row.role),
    status: row.status === 'active' ? 'active' : 'deactivated',
    organization_id: row.orgId,
    deactivated_at: iso(row.deactivatedAt),
    avatar_url: row.avatarUrl,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * A user to insert, with the password in clear (hashed here) or already hashed by `hashPassword`:
 * a caller that creates many users with one password (the test fixtures) hashes it once, since
 * scrypt is slow on purpose.
 */
export type NewUser = {
  orgId: string;
  email: string;
  name: string;
  role: Role;
} & ({ password: string } | { passwordHash: string });

/** Inserts a user; a live user with the same email anywhere is a 409. */
export async function insertUser(db: Executor, input: NewUser): Promise<UserRow> {
  const passwordHash = 'passwordHash' in input ? input.passwordHash : await hashPassword(input.password);
  try {
    const [row] = await db
      .insert(users)
      .values({
        id: newId(),
        orgId: input.orgId,
        email: input.email,
        name: input.name,
        role: input.role,
        passwordHash,
      })
      .returning();
    if (!row) throw new Error('insert returned no row');
    return row;
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new AppError('conflict', {
        message: 'A user with this email already exists',
        details: [{ field: 'email', message: 'already in use', code: 'duplicate' }],
      });
    }
    throw err;
  }
}

/** Live (not deleted) user of the current tenant by id, or a 404. */
export async function getLiveUser(db: Executor, orgId: string, id: string): Promise<UserRow> {
  const [row] = await db
    .select()
    .from(users)
    .where(and(eq(users.id, id), eq(users.orgId, orgId), isNull(users.deletedAt)))
    .limit(1);
  if (!row) throw new AppError('not_found', { message: 'User not found' });
  return row;
}

/**
 * Locks the tenant's users `ids` for the rest of the transaction (FOR UPDATE) and returns their
 * current rows by id, deleted ones included. A change that depends on a user's state (deletion,
 * status, role, being an heir) reads it here, so a concurrent change of the same user waits and the
 * decision is made on the committed result, never on a stale read. Rows are locked in id order, so
 * two transactions locking the same users cannot deadlock.
 */
export async function lockUsers(
  db: Executor,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, UserRow>> {
  const rows = await db
    .select()
    .from(users)
    .where(and(inArray(users.id, [...ids]), eq(users.orgId, orgId)))
    .orderBy(asc(users.id))
    .for('update');
  return new Map(rows.map((row) => [row.id, row]));
}

/** Live user of the current tenant by id, locked for the rest of the transaction (see lockUsers), or a 404. */
export async function lockLiveUser(db: Executor, orgId: string, id: string): Promise<UserRow> {
  return liveOrNotFound((await lockUsers(db, orgId, [id])).get(id));
}

/** The row when it is a live (not deleted) user, or the 404 for a missing or deleted one. */
export function liveOrNotFound(row: UserRow | undefined): UserRow {
  if (!row || row.deletedAt !== null) throw new AppError('not_found', { message: 'User not found' });
  return row;
}

export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(and(sql`lower(${users.email}) = ${email.toLowerCase()}`, isNull(users.deletedAt)))
    .limit(1);
  return row;
}

/** Revokes every API key, OAuth token and refresh token of a user (on deletion); already revoked ones keep their time. */
export async function revokeUserCredentials(
  db: Executor,
  orgId: string,
  userId: string,
  now: Date,
): Promise<void> {
  await db
    .update(apiKeys)
    .set({ revokedAt: now, updatedAt: now })
    .where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
  await db
    .update(oauthTokens)
    .set({ revokedAt: now })
    .where(and(eq(oauthTokens.orgId, orgId), eq(oauthTokens.userId, userId), isNull(oauthTokens.revokedAt)));
  await db
    .update(refreshTokens)
    .set({ revokedAt: now })
    .where(
      and(eq(refreshTokens.orgId, orgId), eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)),
    );
}

/**
 * Soft-deletes a user: the row stays for history, but it is hidden everywhere, its tokens fail and its
 * email is free again (the live-email unique index only covers rows whose deleted_at is null).
 */
export async function softDeleteUser(db: Executor, orgId: string, userId: string, now: Date): Promise<void> {
  await db
    .update(users)
    .set({
      deletedAt: now,
      status: 'deactivated',
      deactivatedAt: sql`coalesce(${users.deactivatedAt}, ${now.toISOString()}::timestamptz)`,
      updatedAt: now,
    })
    .where(and(eq(users.id, userId), eq(users.orgId, orgId)));
}
