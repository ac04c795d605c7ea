// Records a user owns (`owner_id`). Deleting a user consults the registry (every area's `ownedRecords`, collected in tools/index.ts):
// their live records must go to an heir or to the trash first, so nothing is left pointing at a
// deleted user. A new owned resource adds one entry there and the delete rule covers it.
import { and, count, eq, isNull, param, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from './db/client.ts';
import { rowsOf } from './db/sql.ts';
import type { ToolContext } from './tool.ts';

export type OwnershipContext = Pick<ToolContext, 'db' | 'auth' | 'emit' | 'now'>;

export type OwnershipChange =
  | { kind: 'transferred'; fromUserId: string; toUserId: string }
  | { kind: 'trashed' };

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
  /** Writes the resource's events for the records a user deletion moved (webhook subscribers must hear of it). */
  announce(ctx: OwnershipContext, ids: readonly string[], change: OwnershipChange): Promise<void>;
}

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
): Promise<string[]> {
  // Raw UPDATE because the registry holds tables of different shapes; columns still come from the schema.
  const result = await tx.execute(
    sql`update ${entry.table} set ${sql.join(assignments, sql`, `)} where ${liveOwnedBy(entry, orgId, userId)} returning id`,
  );
  return idsOf(result);
}

/** The `id` column of a raw `returning id` result. */
function idsOf(result: unknown): string[] {
  return rowsOf(result).map((row) => {
    if (typeof row === 'object' && row !== null && 'id' in row && typeof row.id === 'string') return row.id;
    throw new Error('unexpected row shape');
  });
}

/** Live (not trashed) records the user owns, per resource; resources with none are listed with 0. */
export async function countOwnedRecords(
  entries: readonly OwnedRecordTable[],
  tx: Executor,
  orgId: string,
  userId: string,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const entry of entries) {
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
  entries: readonly OwnedRecordTable[],
  ctx: OwnershipContext,
  fromUserId: string,
  toUserId: string,
): Promise<void> {
  for (const entry of entries) {
    const assignments = [assign(entry.ownerId, toUserId)];
    if (entry.updatedAt) assignments.push(assign(entry.updatedAt, ctx.now));
    const ids = await updateOwned(ctx.db, entry, ctx.auth.orgId, fromUserId, assignments);
    if (ids.length > 0) await entry.announce(ctx, ids, { kind: 'transferred', fromUserId, toUserId });
  }
}

/** Moves every live record of `userId` to the trash, marked as deleted by `byUserId` (restorable). */
export async function trashOwnedRecords(
  entries: readonly OwnedRecordTable[],
  ctx: OwnershipContext,
  userId: string,
): Promise<void> {
  for (const entry of entries) {
    const ids = await updateOwned(ctx.db, entry, ctx.auth.orgId, userId, [
      assign(entry.deletedAt, ctx.now),
      assign(entry.deletedBy, ctx.auth.userId),
    ]);
    if (ids.length > 0) await entry.announce(ctx, ids, { kind: 'trashed' });
  }
}
