// The document kit's table, document_counters: the last number given per organization and kind of
// numbered document (invoice, estimate). One counter table for every kind, so a new numbered
// document adds a kind, not a table (migration 0019 carried the two older counter tables over).
// And the columns and indexes every document table (invoices, estimates, proposals) declares the
// same way, written once: the areas' tables.ts spread them around their own columns. Column and
// index names are the ones the migrations created; only where they are written changed.
import { type SQL, sql } from 'drizzle-orm';
import {
  bigint,
  type ExtraConfigColumn,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
} from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, ts, tsvector, updatedAt } from '../../core/db/schema.ts';
import type { LineItemInput } from '../../core/line-items.ts';
import { contacts } from '../contacts/tables.ts';
import { leadRef } from '../leads/tables.ts';
import { opportunities } from '../opportunities/tables.ts';

export const documentCounters = pgTable(
  'document_counters',
  {
    orgId: orgId(),
    /** The kind of document numbered: `invoice`, `estimate`. */
    kind: text('kind').notNull(),
    lastNumber: integer('last_number').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.kind] })],
);

/** The first columns of a document: its id, its organization and the lead it is for. */
export function documentHeadColumns() {
  return { id: id(), orgId: orgId(), leadId: leadRef().notNull() };
}

/** The contact a document is addressed to (a contact of its lead), cleared when the contact goes. */
export function contactColumn() {
  return text('contact_id').references(() => contacts.id, { onDelete: 'set null' });
}

/** The deal a document is about (an opportunity of its lead), cleared when the deal goes. */
export function opportunityColumn() {
  return text('opportunity_id').references(() => opportunities.id, { onDelete: 'set null' });
}

/**
 * The priced lines of an invoice or an estimate, as sent (description, quantity, unit_price,
 * discount_percent?, tax_percent?; priced on read), and their totals in the currency's minor units,
 * kept for sorting and filtering.
 */
export function pricedColumns() {
  return {
    lineItems: jsonb('line_items').$type<LineItemInput[]>().notNull(),
    subtotalMinor: bigint('subtotal_minor', { mode: 'bigint' }).notNull(),
    taxTotalMinor: bigint('tax_total_minor', { mode: 'bigint' }).notNull(),
    totalMinor: bigint('total_minor', { mode: 'bigint' }).notNull(),
  };
}

/**
 * How many times a document was sent, the n of its outbox key `<kind>:<id>:send:<n>`
 * (tools/documents/send.ts), and when it was last sent.
 */
export function sendColumns() {
  return { sendCount: integer('send_count').notNull().default(0), sentAt: ts('sent_at') };
}

/** The last columns of a document: who made it, the trash stamp, its times and its search vector. */
export function documentTailColumns(search: SQL) {
  return {
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    search: tsvector('search').generatedAlwaysAs(search),
  };
}

/** The search vector of a numbered document: its number and its notes. */
export const NUMBER_AND_NOTES = sql`to_tsvector('simple', coalesce(number, '') || ' ' || coalesce(notes, ''))`;

interface IndexedDocument {
  id: ExtraConfigColumn;
  orgId: ExtraConfigColumn;
  leadId: ExtraConfigColumn;
  contactId?: ExtraConfigColumn;
  opportunityId: ExtraConfigColumn;
  createdAt: ExtraConfigColumn;
  deletedAt: ExtraConfigColumn;
  search: ExtraConfigColumn;
}

/**
 * The indexes every document table has, named `<table>_…`: the live list newest first, the lead,
 * the contact (when the table has one), the deal and the search vector.
 */
export function documentIndexes(table: string, t: IndexedDocument) {
  return [
    index(`${table}_live_created_idx`)
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index(`${table}_lead_idx`).on(t.leadId),
    ...(t.contactId ? [index(`${table}_contact_idx`).on(t.contactId)] : []),
    index(`${table}_opportunity_idx`).on(t.opportunityId),
    index(`${table}_search_idx`).using('gin', t.search),
  ];
}

/** The expiry job's scan (tools/documents/expiry.ts): the open documents by validity. */
export function expiryIndex(table: string, t: { validUntil: ExtraConfigColumn; status: ExtraConfigColumn }) {
  return index(`${table}_expiry_idx`).on(t.validUntil).where(sql`${t.status} in ('draft', 'sent')`);
}
