// The trash: records moved there keep their row with `deleted_at`/`deleted_by` set and can be
// restored. Each trashable record type is one entry (its table, the columns the trash reads and how
// to restore it), so a new resource joins the trash by adding an entry to the registry list.
import { and, eq, inArray, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import type { ScopeFamily } from './access.ts';
import type { Executor } from './db/client.ts';
import { countOf, rowsOf } from './db/sql.ts';
import type { Page } from './schemas.ts';
import { offsetOf } from './schemas.ts';
import type { ToolContext } from './tool.ts';

export type TrashContext = Pick<ToolContext, 'db' | 'auth' | 'emit' | 'now'>;

export interface TrashType {
  /** The `type` of its trash items (`lead`). */
  type: string;
  /** The key of the restored record in the restore response (`{ type, lead }`). */
  recordKey: string;
  /** The scope family the records belong to: tokens need its read/write scope to list/restore them. */
  resource: ScopeFamily;
  /** The shape of the restored record. */
  schema: z.ZodType;
  table: PgTable;
  /** `name` may be an SQL expression over the table, for records without a name column. */
  columns: { id: PgColumn; orgId: PgColumn; name: PgColumn | SQL; deletedAt: PgColumn; deletedBy: PgColumn };
  /** Restores the trashed record (404 when it is not in the trash) and returns it in its public shape. */
  restore(ctx: TrashContext, id: string): Promise<Record<string, unknown>>;
}

export interface TrashItem {
  type: string;
  _id: string;
  name: string;
  deleted_at: Date;
  deleted_by: string | null;
}

const trashRow = z.object({
  type: z.string(),
  id: z.string(),
  name: z.string(),
  deleted_at: z.coerce.date(),
  deleted_by: z.string().nullable(),
});
function trashedOf(entry: TrashType, orgId: string): SQL {
  const c = entry.columns;
  return sql`select ${entry.type}::text as type, ${c.id} as id, ${c.name} as name, ${c.deletedAt} as deleted_at, ${c.deletedBy} as deleted_by from ${entry.table} where ${and(eq(c.orgId, orgId), isNotNull(c.deletedAt))}`;
}

/** One query over every trashable table (raw UNION ALL, since the tables differ in shape). */
function unionOf(types: readonly TrashType[], orgId: string): SQL {
  return sql.join(
    types.map((t) => trashedOf(t, orgId)),
    sql` union all `,
  );
}

/** Trashed records of the organization, newest deleted first (id breaks ties, so paging is stable). */
export async function listTrash(
  db: Executor,
  orgId: string,
  types: readonly TrashType[],
  page: Page,
): Promise<{ items: TrashItem[]; total: number }> {
  if (types.length === 0) return { items: [], total: 0 };
  const union = unionOf(types, orgId);
  const countResult = await db.execute(sql`select count(*)::int as n from (${union}) trash`);
  const total = countOf(countResult);
  const result = await db.execute(
    sql`select * from (${union}) trash order by deleted_at desc, id desc limit ${page.limit} offset ${offsetOf(page)}`,
  );
  const items = rowsOf(result).map((raw) => {
    const row = trashRow.parse(raw);
    return {
      type: row.type,
      _id: row.id,
      name: row.name,
      deleted_at: row.deleted_at,
      deleted_by: row.deleted_by,
    };
  });
  return { items, total };
}

/** The registry entry whose table holds `id` in the organization's trash, if any. */
export async function findTrashType(
  db: Executor,
  orgId: string,
  types: readonly TrashType[],
  id: string,
): Promise<TrashType | undefined> {
  for (const entry of types) {
    const c = entry.columns;
    const [row] = await db
      .select({ id: c.id })
      .from(entry.table)
      .where(and(eq(c.id, id), eq(c.orgId, orgId), isNotNull(c.deletedAt)))
      .limit(1);
    if (row) return entry;
  }
  return undefined;
}

/**
 * Permanently deletes the records of every type in `types` that went to the trash before `cutoff`,
 * across all organizations (pass the system executor). Works in batches of `batchSize` rows, each
 * its own statement, so a huge trash never holds one long transaction or lock; children of a lead
 * go with it through the foreign keys' cascade. Returns how many rows of each type were deleted.
 */
export async function purgeTrash(
  db: Executor,
  types: readonly TrashType[],
  cutoff: Date,
  batchSize: number,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const entry of types) {
    const c = entry.columns;
    let purged = 0;
    for (;;) {
      const deleted = await db
        .delete(entry.table)
        .where(
          sql`${c.id} in (select ${c.id} from ${entry.table} where ${c.deletedAt} is not null and ${c.deletedAt} < ${cutoff} limit ${batchSize})`,
        )
        .returning({ id: c.id });
      purged += deleted.length;
      if (deleted.length < batchSize) break;
    }
    counts[entry.type] = purged;
  }
  return counts;
}

/**
 * A table whose rows hang off a parent record (a lead's contacts, tasks...): they follow the parent
 * into the trash and back. Trashing the parent stamps its live children with the parent's own
 * `deleted_at`, and restoring it brings back exactly the children carrying that stamp, so a child
 * deleted on its own earlier stays in the trash. Purging the parent removes them by FK cascade.
 * Every child table names its trash columns `deletedAt`/`deletedBy`, which the updates set by key.
 */
export interface ChildTable {
  table: PgTable;
  orgId: PgColumn;
  parentId: PgColumn;
  deletedAt: PgColumn;
  deletedBy: PgColumn;
}

/** Moves the live children of the given parents to the trash with the parents' deletion stamp. */
export async function trashChildren(
  db: Executor,
  children: readonly ChildTable[],
  orgId: string,
  parentIds: readonly string[],
  stamp: { deletedAt: Date; deletedBy: string },
): Promise<void> {
  if (parentIds.length === 0) return;
  for (const child of children) {
    await db
      .update(child.table)
      .set(stamp)
      .where(and(eq(child.orgId, orgId), inArray(child.parentId, [...parentIds]), isNull(child.deletedAt)));
  }
}

/** Brings back the children that went to the trash with their parent (same `deleted_at`). */
export async function restoreChildren(
  db: Executor,
  children: readonly ChildTable[],
  orgId: string,
  parentId: string,
  deletedAt: Date,
): Promise<void> {
  for (const child of children) {
    await db
      .update(child.table)
      .set({ deletedAt: null, deletedBy: null })
      .where(and(eq(child.orgId, orgId), eq(child.parentId, parentId), eq(child.deletedAt, deletedAt)));
  }
}
