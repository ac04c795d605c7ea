// The invoices area's tables: invoices (lines and payments as jsonb on the invoice, money as exact
// integer minor units); finalize numbers them from the document kit's counter (tools/documents).
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, ts, tsvector, updatedAt } from '../../core/db/schema.ts';
import type { LineItemInput } from '../../core/line-items.ts';
import { contacts } from '../contacts/tables.ts';
import { leadRef } from '../leads/tables.ts';
import { opportunities } from '../opportunities/tables.ts';

/** One recorded payment, the amount as the decimal text of the major unit (exact). */
export interface StoredPayment {
  amount: string;
  paid_at: string;
  method: string | null;
  reference: string | null;
  recorded_by: string;
}

export const invoices = pgTable(
  'invoices',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef().notNull(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    opportunityId: text('opportunity_id').references(() => opportunities.id, { onDelete: 'set null' }),
    /**
     * The project whose time it bills (tools/projects), or null. The database keeps its foreign key
     * to projects (on delete set null, migration 0012); it is not declared here so that invoices'
     * tables name no table of projects, which depends on invoices (docs/decisions.md "Invoices and
     * projects: one way").
     */
    projectId: text('project_id'),
    /** INV-000001, given by finalize; null while draft. */
    number: text('number'),
    status: text('status').notNull().default('draft'),
    currency: text('currency').notNull(),
    issueDate: date('issue_date', { mode: 'string' }),
    dueDate: date('due_date', { mode: 'string' }),
    notes: text('notes'),
    /** The lines as sent (description, quantity, unit_price, discount_percent?, tax_percent?); priced on read. */
    lineItems: jsonb('line_items').$type<LineItemInput[]>().notNull(),
    /** Totals in the currency's minor units (cents), kept for sorting and filtering. */
    subtotalMinor: bigint('subtotal_minor', { mode: 'bigint' }).notNull(),
    taxTotalMinor: bigint('tax_total_minor', { mode: 'bigint' }).notNull(),
    totalMinor: bigint('total_minor', { mode: 'bigint' }).notNull(),
    amountPaidMinor: bigint('amount_paid_minor', { mode: 'bigint' }).notNull().default(sql`0`),
    payments: jsonb('payments').$type<StoredPayment[]>().notNull().default([]),
    isOverdue: boolean('is_overdue').notNull().default(false),
    finalizedAt: ts('finalized_at'),
    paidAt: ts('paid_at'),
    voidedAt: ts('voided_at'),
    /** When it was last sent (POST /invoices/{id}/send); null until then. */
    sentAt: ts('sent_at'),
    /** How many times it was sent: the n of the outbox key `invoice:<id>:send:<n>`. */
    sendCount: integer('send_count').notNull().default(0),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    search: tsvector('search').generatedAlwaysAs(
      sql`to_tsvector('simple', coalesce(number, '') || ' ' || coalesce(notes, ''))`,
    ),
  },
  (t) => [
    index('invoices_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('invoices_lead_idx').on(t.leadId),
    index('invoices_contact_idx').on(t.contactId),
    index('invoices_opportunity_idx').on(t.opportunityId),
    index('invoices_project_idx').on(t.projectId),
    uniqueIndex('invoices_org_number_idx').on(t.orgId, t.number),
    index('invoices_search_idx').using('gin', t.search),
  ],
);

export type InvoiceRow = typeof invoices.$inferSelect;
