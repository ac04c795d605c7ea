// Records that hang off a lead (contacts, opportunities, activities, tasks). They follow their lead
// into the trash and back: trashing a lead stamps its live children with the lead's own
// `deleted_at`, and restoring the lead brings back exactly the children carrying that stamp, so a
// child deleted on its own earlier stays in the trash. Purging a lead removes them by FK cascade.
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../core/db/client.ts';
import { activities, contacts, leads, opportunities, tasks } from '../core/db/schema.ts';
import { AppError } from '../core/errors.ts';

interface LeadChildTable {
  /** Every child table names its trash columns `deletedAt`/`deletedBy`, which the updates set by key. */
  table: PgTable;
  orgId: PgColumn;
  leadId: PgColumn;
  deletedAt: PgColumn;
  deletedBy: PgColumn;
}

export const LEAD_CHILDREN: readonly LeadChildTable[] = [contacts, opportunities, activities, tasks].map(
  (t) => ({ table: t, orgId: t.orgId, leadId: t.leadId, deletedAt: t.deletedAt, deletedBy: t.deletedBy }),
);

/** Moves the live children of the given leads to the trash with the leads' deletion stamp. */
export async function trashLeadChildren(
  db: Executor,
  orgId: string,
  leadIds: readonly string[],
  deletedAt: Date,
  deletedBy: string,
): Promise<void> {
  if (leadIds.length === 0) return;
  for (const child of LEAD_CHILDREN) {
    await db
      .update(child.table)
      .set({ deletedAt, deletedBy })
      .where(and(eq(child.orgId, orgId), inArray(child.leadId, [...leadIds]), isNull(child.deletedAt)));
  }
}

/** Brings back the children that went to the trash with their lead (same `deleted_at`). */
export async function restoreLeadChildren(
  db: Executor,
  orgId: string,
  leadId: string,
  deletedAt: Date,
): Promise<void> {
  for (const child of LEAD_CHILDREN) {
    await db
      .update(child.table)
      .set({ deletedAt: null, deletedBy: null })
      .where(and(eq(child.orgId, orgId), eq(child.leadId, leadId), eq(child.deletedAt, deletedAt)));
  }
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
export async function assertLeadLive(db: Executor, orgId: string, leadId: string): Promise<void> {
  if (!(await isLiveLead(db, orgId, leadId))) {
    throw new AppError('conflict', { message: 'Restore its lead first' });
  }
}
