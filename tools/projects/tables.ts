// The projects area's tables: projects (money as exact integer minor units of the project's
// currency) and their time entries. An entry's billing state is derived from the invoice it is on
// (invoice_id), never stored: billed while that invoice is open, paid or uncollectible.
import { sql } from 'drizzle-orm';
import { bigint, boolean, date, index, integer, numeric, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, tsvector, updatedAt } from '../../core/db/schema.ts';
import { invoices } from '../invoices/tables.ts';
import { leadRef } from '../leads/tables.ts';

export const projects = pgTable(
  'projects',
  {
    id: id(),
    orgId: orgId(),
    /** The client; invoicing needs one. */
    leadId: leadRef(),
    name: text('name').notNull(),
    status: text('status').notNull().default('active'),
    currency: text('currency').notNull(),
    /** Default rate of its time entries, in the currency's minor units per hour; null: none. */
    hourlyRateMinor: bigint('hourly_rate_minor', { mode: 'bigint' }),
    budgetHours: numeric('budget_hours', { precision: 12, scale: 2 }),
    startsOn: date('starts_on', { mode: 'string' }),
    dueOn: date('due_on', { mode: 'string' }),
    description: text('description'),
    createdBy: text('created_by'),
    /** Projects are deleted for good (docs/decisions.md "Projects"); the record helper reads these. */
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    search: tsvector('search').generatedAlwaysAs(sql`to_tsvector('simple', coalesce(name, ''))`),
  },
  (t) => [
    index('projects_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('projects_lead_idx').on(t.leadId),
    index('projects_search_idx').using('gin', t.search),
  ],
);

export type ProjectRow = typeof projects.$inferSelect;

export const timeEntries = pgTable(
  'time_entries',
  {
    id: id(),
    orgId: orgId(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Who worked (an assignable user when logged). */
    userId: text('user_id').notNull(),
    date: date('date', { mode: 'string' }).notNull(),
    minutes: integer('minutes').notNull(),
    description: text('description').notNull(),
    billable: boolean('billable').notNull().default(true),
    /** The entry's own rate in minor units per hour; null: the project's. */
    hourlyRateMinor: bigint('hourly_rate_minor', { mode: 'bigint' }),
    /** The invoice it was last put on; a deleted draft releases it. */
    invoiceId: text('invoice_id').references(() => invoices.id, { onDelete: 'set null' }),
    /** The amount of its line on that invoice, in minor units (what the billed total counts). */
    invoicedAmountMinor: bigint('invoiced_amount_minor', { mode: 'bigint' }),
    createdBy: text('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('time_entries_project_date_idx').on(t.projectId, t.date),
    index('time_entries_invoice_idx').on(t.invoiceId),
  ],
);

export type TimeEntryRow = typeof timeEntries.$inferSelect;
