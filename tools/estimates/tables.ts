// The estimates area's tables: estimates (lines as jsonb, money as exact integer minor units, the
// number EST-000001 given at creation from the document kit's counter, tools/documents).
import { date, index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { ts } from '../../core/db/schema.ts';
import {
  contactColumn,
  documentHeadColumns,
  documentIndexes,
  documentTailColumns,
  expiryIndex,
  NUMBER_AND_NOTES,
  opportunityColumn,
  pricedColumns,
  sendColumns,
} from '../documents/tables.ts';
import { invoices } from '../invoices/tables.ts';

export const estimates = pgTable(
  'estimates',
  {
    ...documentHeadColumns(),
    contactId: contactColumn(),
    opportunityId: opportunityColumn(),
    /** EST-000001, given at creation from document_counters (gap-free per organization). */
    number: text('number').notNull(),
    status: text('status').notNull().default('draft'),
    currency: text('currency').notNull(),
    issueDate: date('issue_date', { mode: 'string' }),
    validUntil: date('valid_until', { mode: 'string' }),
    notes: text('notes'),
    ...pricedColumns(),
    ...sendColumns(),
    acceptedAt: ts('accepted_at'),
    declinedAt: ts('declined_at'),
    declineReason: text('decline_reason'),
    expiredAt: ts('expired_at'),
    /** The draft invoice made by convert-to-invoice; cleared if that draft is deleted. */
    invoiceId: text('invoice_id').references(() => invoices.id, { onDelete: 'set null' }),
    ...documentTailColumns(NUMBER_AND_NOTES),
  },
  (t) => [
    ...documentIndexes('estimates', t),
    index('estimates_invoice_idx').on(t.invoiceId),
    expiryIndex('estimates', t),
    uniqueIndex('estimates_org_number_idx').on(t.orgId, t.number),
  ],
);

export type EstimateRow = typeof estimates.$inferSelect;
