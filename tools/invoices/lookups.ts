// What other areas ask of invoices without reading the invoices table themselves (docs/architecture.md
// "Boundaries"): tools/projects joins the invoice its time entries are on, to know whether they are
// billed, and counts the invoices naming a project that still bill its client.
import { and, type Column, eq, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { invoices } from './tables.ts';

/**
 * The invoice a row names by `invoiceId`, to join onto a query over that row:
 * `.leftJoin(invoiceJoin.table, invoiceJoin.on(timeEntries.invoiceId))`, after which the query may
 * read `invoiceJoin.status` (null when the row is on no invoice).
 */
export const invoiceJoin = {
  table: invoices,
  on: (invoiceId: Column): SQL => eq(invoices.id, invoiceId),
  status: invoices.status,
};

/** How many live invoices name the project and are not void (they still bill its client). */
export async function countBillingInvoicesOfProject(db: Executor, projectId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(invoices)
    .where(
      and(
        eq(invoices.projectId, projectId),
        sql`${invoices.status} <> 'void'`,
        sql`${invoices.deletedAt} is null`,
      ),
    );
  return row?.n ?? 0;
}
