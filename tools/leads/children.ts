// Records that hang off a lead (contacts, opportunities, activities, tasks) follow it into the trash
// and back (core/trash.ts ChildTable); each child area declares its table with leadChild() and
// tools/index.ts hands the collected list to the leads area. A child restored on its own needs its
// lead live.
import { and, eq, isNull } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../../core/db/client.ts';
import { AppError } from '../../core/errors.ts';
import type { RecordContext, RecordRow, RecordTable, Restored } from '../../core/records.ts';
import type { ChildTable } from '../../core/trash.ts';
import { leads } from './tables.ts';

/** The child-table entry of a table with the usual `orgId`, `leadId` and trash columns. */
export function leadChild(
  table: PgTable & { orgId: PgColumn; leadId: PgColumn; deletedAt: PgColumn; deletedBy: PgColumn },
): ChildTable {
  return {
    table,
    orgId: table.orgId,
    parentId: table.leadId,
    deletedAt: table.deletedAt,
    deletedBy: table.deletedBy,
  };
}

/** True when the lead is a live (not trashed) lead of the organization. */
export async function isLiveLead(db: Executor, orgId: string, leadId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: leads.id })
    .from(leads)
    .where(and(eq(leads.id, leadId), eq(leads.orgId, orgId), isNull(leads.deletedAt)))
    .limit(1);
  return row !== undefined;
}

/**
 * A child record deleted on its own comes back alone only while its lead is live: a restored child
 * of a trashed lead would be visible beside a lead that is not (409; restoring the lead brings it back).
 */
async function assertLeadLive(db: Executor, orgId: string, leadId: string): Promise<void> {
  if (!(await isLiveLead(db, orgId, leadId))) {
    throw new AppError('conflict', { message: 'Restore its lead first' });
  }
}

/** Restores a child record deleted on its own (see assertLeadLive); a child without a lead needs none. */
export function restoreLeadChild<Row extends RecordRow & { leadId: string | null }>(
  records: RecordTable<Row>,
  ctx: RecordContext,
  id: string,
): Promise<Restored<Row>> {
  return records.restore(ctx, id, async (before) => {
    if (before.leadId !== null) await assertLeadLive(ctx.db, ctx.auth.orgId, before.leadId);
  });
}
