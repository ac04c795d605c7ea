// What the projects area answers for the invoices area (core/area.ts InvoiceProjectsHook): an
// invoice may name a project of its lead, and a draft billed from a project's time keeps its lines.
// Invoices are built with this hook, so they never read projects' tables (docs/architecture.md
// "Boundaries").
import { and, eq, sql } from 'drizzle-orm';
import type { InvoiceProjectsHook } from '../../core/area.ts';
import { projects, timeEntries } from './tables.ts';

export const projectInvoiceHooks: InvoiceProjectsHook = {
  async isProjectOfLead(db, orgId, projectId, leadId) {
    const [project] = await db
      .select({ id: projects.id })
      .from(projects)
      .where(
        and(
          eq(projects.id, projectId),
          eq(projects.orgId, orgId),
          eq(projects.leadId, leadId),
          sql`${projects.deletedAt} is null`,
        ),
      );
    return project !== undefined;
  },
  async billsOnInvoice(db, orgId, invoiceId) {
    const [row] = await db
      .select({ id: timeEntries.id })
      .from(timeEntries)
      .where(and(eq(timeEntries.invoiceId, invoiceId), eq(timeEntries.orgId, orgId)))
      .limit(1);
    return row !== undefined;
  },
};
