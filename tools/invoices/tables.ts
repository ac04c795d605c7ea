// The invoices area's tables: invoices (lines and payments as jsonb on the invoice, money as exact
// integer minor units); finalize numbers them from the document kit's counter (tools/documents).
import { sql } from 'drizzle-orm';
import { bigint, boolean, date, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { ts } from '../../core/db/schema.ts';
import {
  contactColumn,
  documentHeadColumns,
  documentIndexes,
  documentTailColumns,
  NUMBER_AND_NOTES,
  opportunityColumn,
  pricedColumns,
  sendColumns,
} from '../documents/tables.ts';

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
    ...documentHeadColumns(),
    contactId: contactColumn(),
    opportunityId: opportunityColumn(),
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
    ...pricedColumns(),
    amountPaidMinor: bigint('amount_paid_minor', { mode: 'bigint' }).notNull().default(sql`0`),
    payments: jsonb('payments').$type<StoredPayment[]>().notNull().default([]),
    isOverdue: boolean('is_overdue').notNull().default(false),
    finalizedAt: ts('finalized_at'),
    paidAt: ts('paid_at'),
    voidedAt: ts('voided_at'),
    /** Sent by POST /invoices/{id}/send; sent_at null until then. */
    ...sendColumns(),
    ...documentTailColumns(NUMBER_AND_NOTES),
  },
  (t) => [
    ...documentIndexes('invoices', t),
    index('invoices_project_idx').on(t.projectId),
    uniqueIndex('invoices_org_number_idx').on(t.orgId, t.number),
  ],
);

export type InvoiceRow = typeof invoices.$inferSelect;
