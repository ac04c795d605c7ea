// The opportunities area's table: deals on a lead.
import { sql } from 'drizzle-orm';
import { date, index, integer, numeric, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import {
  createdAt,
  deletedAt,
  deletedBy,
  id,
  orgId,
  searchTermColumns,
  ts,
  tsvector,
  updatedAt,
} from '../../core/db/schema.ts';
import { contacts } from '../contacts/tables.ts';
import { leadRef } from '../leads/tables.ts';

export const opportunities = pgTable(
  'opportunities',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef().notNull(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    note: text('note'),
    /** In the currency's major unit (12.5 = 12.50), exact to the cent. */
    value: numeric('value', { precision: 18, scale: 2, mode: 'number' }).notNull().default(0),
    currency: text('currency').notNull().default('USD'),
    confidence: integer('confidence').notNull().default(0),
    status: text('status').notNull().default('active'),
    pipelineStage: text('pipeline_stage'),
    expectedCloseDate: date('expected_close_date', { mode: 'string' }),
    ownerId: text('owner_id'),
    /** When the status last moved to won or lost; null while active. */
    closedAt: ts('closed_at'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    search: tsvector('search').generatedAlwaysAs(
      sql`to_tsvector('simple', coalesce(note, '') || ' ' || coalesce(pipeline_stage, '') || ' ' || coalesce(status, ''))`,
    ),
  },
  (t) => [
    index('opportunities_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('opportunities_lead_idx').on(t.leadId),
    // The ON DELETE SET NULL of contact_id when a contact is purged.
    index('opportunities_contact_idx').on(t.contactId),
    index('opportunities_owner_idx').on(t.orgId, t.ownerId),
    index('opportunities_search_idx').using('gin', t.search),
    index('opportunities_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

export type OpportunityRow = typeof opportunities.$inferSelect;

/**
 * The words of each live opportunity's search vector, one row per (word, opportunity), with what the
 * global search ranks a one-word search by (INCLUDE columns of the key, hand-written in migration
 * 0034), kept by statement-level triggers on `opportunities`: a one-word search ranks its matches
 * from one index range instead of reading each match's vector from the heap (tools/opportunities/search.ts).
 */
export const opportunitySearchTerms = pgTable(
  'opportunity_search_terms',
  searchTermColumns('opportunity_id'),
  (t) => [primaryKey({ columns: [t.orgId, t.term, t.recordId] })],
);
