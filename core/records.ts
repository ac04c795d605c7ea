// The record helper: what every record resource (leads, contacts, opportunities, tasks...) repeats,
// written once. Areas keep only what is their own: their columns, their shape, their rules.
import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from './db/client.ts';
import { users } from './db/schema.ts';
import { validationError } from './errors.ts';

/**
 * Whether `userId` may own or be assigned a record now: a live, active user of the organization.
 * The user row stays key-share locked for the rest of the transaction: a user deletion (which locks
 * its users FOR UPDATE) either waits for this assignment to commit and then moves the new record
 * too, or finishes first and this check sees it.
 */
export async function isAssignableUser(db: Executor, orgId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(
      and(eq(users.id, userId), eq(users.orgId, orgId), isNull(users.deletedAt), eq(users.status, 'active')),
    )
    .limit(1)
    .for('key share');
  return row !== undefined;
}

/** 400 `invalid_owner` on `field` unless the user may own records (see isAssignableUser). */
export async function assertAssignableOwner(
  db: Executor,
  orgId: string,
  ownerId: string,
  field = 'owner_id',
): Promise<void> {
  if (!(await isAssignableUser(db, orgId, ownerId))) {
    throw validationError([
      { field, message: 'must be the id of an active user of this organization', code: 'invalid_owner' },
    ]);
  }
}

/** JSON text with object keys sorted, so values read back from jsonb compare equal to what was sent. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
