// The estimates area's tables: estimates (lines as jsonb, money as exact integer minor units, the
// number EST-000001 given at creation from the document kit's counter, tools/documents).
import { sql } from 'drizzle-orm';
import { bigint, date, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, ts, tsvector, updatedAt } from '../../core/db/schema.ts';
import type { LineItemInput } from '../../core/line-items.ts';
import { contacts } from '../contacts/tables.ts';
import { invoices } from '../invoices/tables.ts';
import { leadRef } from '../leads/tables.ts';
import { opportunities } from '../opportunities/tables.ts';

export const estimates = pgTable(
  'estimates',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef().notNull(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    opportunityId: text('opportunity_id').references(() => opportunities.id, { onDelete: 'set null' }),
    /** EST-000001, given at creation from document_counters (gap-free per organization). */
    number: text('number').notNull(),
    status: text('status').notNull().default('draft'),
    currency: text('currency').notNull(),
    issueDate: date('issue_date', { mode: 'string' }),
    validUntil: date('valid_until', { mode: 'string' }),
    notes: text('notes'),
    /** The lines as sent (description, quantity, unit_price, discount_percent?, tax_percent?); priced on read. */
    lineItems: jsonb('line_items').$type<LineItemInput[]>().notNull(),
    /** Totals in the currency's minor units, kept for sorting. */
    subtotalMinor: bigint('subtotal_minor', { mode: 'bigint' }).notNull(),
    taxTotalMinor: bigint('tax_total_minor', { mode: 'bigint' }).notNull(),
    totalMinor: bigint('total_minor', { mode: 'bigint' }).notNull(),
    /** How many times it was sent (the mail's idempotency key estimate:<id>:send:<n>). */
    sendCount: integer('send_count').notNull().default(0),
    sentAt: ts('sent_at'),
    acceptedAt: ts('accepted_at'),
    declinedAt: ts('declined_at'),
    declineReason: text('decline_reason'),
    expiredAt: ts('expired_at'),
    /** The draft invoice made by convert-to-invoice; cleared if that draft is deleted. */
    invoiceId: text('invoice_id').references(() => invoices.id, { onDelete: 'set null' }),
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
    index('estimates_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('estimates_lead_idx').on(t.leadId),
    index('estimates_contact_idx').on(t.contactId),
    index('estimates_opportunity_idx').on(t.opportunityId),
    index('estimates_invoice_idx').on(t.invoiceId),
    // The expiry job's scan: open estimates by validity.
    index('estimates_expiry_idx').on(t.validUntil).where(sql`${t.status} in ('draft', 'sent')`),
    uniqueIndex('estimates_org_number_idx').on(t.orgId, t.number),
    index('estimates_search_idx').using('gin', t.search),
  ],
);

export type EstimateRow = typeof estimates.$inferSelect;
