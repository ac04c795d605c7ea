// The proposals area's table: one row per proposal, its sections and optional priced lines as
// jsonb (money as exact integer minor units), and the SHA-256 hash of its public page token (the
// raw token is never stored: it appears once, in the answer of send and in the mail).
import { sql } from 'drizzle-orm';
import { bigint, date, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { ts } from '../../core/db/schema.ts';
import type { LineItemInput } from '../../core/line-items.ts';
import {
  documentHeadColumns,
  documentIndexes,
  documentTailColumns,
  expiryIndex,
  opportunityColumn,
  sendColumns,
} from '../documents/tables.ts';

/** One section of a proposal: a heading and its Markdown body (rendered safely on the public page). */
export interface StoredSection {
  heading: string;
  body_markdown: string;
}

export const proposals = pgTable(
  'proposals',
  {
    ...documentHeadColumns(),
    opportunityId: opportunityColumn(),
    title: text('title').notNull(),
    sections: jsonb('sections').$type<StoredSection[]>().notNull(),
    /** Required when there are lines; may be set without them. */
    currency: text('currency'),
    /** The lines as sent; empty when the proposal is not priced. */
    lineItems: jsonb('line_items').$type<LineItemInput[]>().notNull().default([]),
    /** Totals in minor units; null when there are no lines. */
    subtotalMinor: bigint('subtotal_minor', { mode: 'bigint' }),
    taxTotalMinor: bigint('tax_total_minor', { mode: 'bigint' }),
    totalMinor: bigint('total_minor', { mode: 'bigint' }),
    status: text('status').notNull().default('draft'),
    validUntil: date('valid_until', { mode: 'string' }),
    /** SHA-256 (hex) of the current public token; null until sent. Each send issues a new one. */
    publicTokenHash: text('public_token_hash'),
    ...sendColumns(),
    sentTo: text('sent_to'),
    acceptedAt: ts('accepted_at'),
    acceptedByName: text('accepted_by_name'),
    acceptedByEmail: text('accepted_by_email'),
    /** The typed signature given on acceptance, if any. */
    signature: text('signature'),
    declinedAt: ts('declined_at'),
    declineReason: text('decline_reason'),
    expiredAt: ts('expired_at'),
    ...documentTailColumns(sql`to_tsvector('simple', coalesce(title, ''))`),
  },
  (t) => [
    ...documentIndexes('proposals', t),
    uniqueIndex('proposals_public_token_idx').on(t.publicTokenHash),
    expiryIndex('proposals', t),
  ],
);

export type ProposalRow = typeof proposals.$inferSelect;
