// The registry of records a user owns (`owner_id`). Deleting a user consults it: their live records
// must go to an heir or to the trash first, so nothing is left pointing at a deleted user. A new
// owned resource adds one entry here and the delete rule covers it without further code.
import { and, count, eq, isNull, param, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from './db/client.ts';
import { leads } from './db/schema.ts';

export interface OwnedRecordTable {
  /** The key used in counts and error bodies: the resource's plural name (`leads`). */
  name: string;
  table: PgTable;
  orgId: PgColumn;
  ownerId: PgColumn;
  /** Trash markers: a record with `deleted_at` set is in the trash and can be restored. */
  deletedAt: PgColumn;
  deletedBy: PgColumn;
  /** Bumped when the owner changes, so sync clients see the record as modified. */
  updatedAt?: PgColumn;
}

export const OWNED_RECORD_TABLES: readonly OwnedRecordTable[] = [
  {
    name: 'leads',
    table: leads,
    orgId: leads.orgId,
    ownerId: leads.ownerId,
    deletedAt: leads.deletedAt,
    deletedBy: leads.deletedBy,
    updatedAt: leads.updatedAt,
  },
];

function liveOwnedBy(entry: OwnedRecordTable, orgId: string, userId: string): SQL | undefined {
  return and(eq(entry.orgId, orgId), eq(entry.ownerId, userId), isNull(entry.deletedAt));
}

/** `column = value` for an UPDATE's SET list: the bare column name, the value encoded by the column. */
function assign(column: PgColumn, value: unknown): SQL {
  return sql`${sql.identifier(column.name)} = ${param(value, column)}`;
}

async function updateOwned(
  tx: Executor,
  entry: OwnedRecordTable,
  orgId: string,
  userId: string,
  assignments: SQL[],
): Promise<void> {
  // Raw UPDATE because the registry holds tables of different shapes; columns still come from the schema.
  await tx.execute(
    sql`update ${entry.table} set ${sql.join(assignments, sql`, `)} where ${liveOwnedBy(entry, orgId, userId)}`,
  );
}

/** Live (not trashed) records the user owns, per resource; resources with none are listed with 0. */
export async function countOwnedRecords(
  tx: Executor,
  orgId: string,
  userId: string,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const entry of OWNED_RECORD_TABLES) {
    const [row] = await tx
      .select({ n: count() })
      .from(entry.table)
      .where(liveOwnedBy(entry, orgId, userId));
    counts[entry.name] = row?.n ?? 0;
  }
  return counts;
}

/** Gives every live record of `fromUserId` to `toUserId`. */
export async function transferOwnedRecords(
  tx: Executor,
  orgId: string,
  fromUserId: string,
  toUserId: string,
  now: Date = new Date(),
): Promise<void> {
  for (const entry of OWNED_RECORD_TABLES) {
    const assignments = [assign(entry.ownerId, toUserId)];
    if (entry.updatedAt) assignments.push(assign(entry.updatedAt, now));
    await updateOwned(tx, entry, orgId, fromUserId, assignments);
  }
}

/** Moves every live record of `userId` to the trash, marked as deleted by `byUserId` (restorable). */
export async function trashOwnedRecords(
  tx: Executor,
  orgId: string,
  userId: string,
  byUserId: string,
  now: Date,
): Promise<void> {
  for (const entry of OWNED_RECORD_TABLES) {
    await updateOwned(tx, entry, orgId, userId, [
      assign(entry.deletedAt, now),
      assign(entry.deletedBy, byUserId),
    ]);
  }
}
