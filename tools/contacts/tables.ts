// The contacts area's table: people at a lead.
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import {
  createdAt,
  deletedAt,
  deletedBy,
  id,
  orgId,
  searchTermColumns,
  tsvector,
  updatedAt,
} from '../../core/db/schema.ts';
import { leadRef } from '../leads/tables.ts';

export interface ContactEmail {
  email: string;
  type: string;
}
export interface ContactPhone {
  phone: string;
  type: string;
}

export const contacts = pgTable(
  'contacts',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef().notNull(),
    name: text('name').notNull(),
    title: text('title'),
    emails: jsonb('emails').$type<ContactEmail[]>().notNull().default([]),
    phones: jsonb('phones').$type<ContactPhone[]>().notNull().default([]),
    /** Additional properties (custom fields), as on leads. */
    custom: jsonb('custom').$type<Record<string, unknown>>().notNull().default({}),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    search: tsvector('search').generatedAlwaysAs(
      sql`to_tsvector('simple', coalesce(name, '') || ' ' || coalesce(title, '') || ' ' || jsonb_path_query_array(emails, '$[*].email')::text || ' ' || jsonb_path_query_array(phones, '$[*].phone')::text)`,
    ),
  },
  (t) => [
    index('contacts_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    // Lead ids are unique across organizations, so lead_id alone is as selective as (org_id, lead_id)
    // and also serves the FK cascade when a lead is purged (its DELETE names lead_id only).
    index('contacts_lead_idx').on(t.leadId),
    index('contacts_search_idx').using('gin', t.search),
    index('contacts_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

export type ContactRow = typeof contacts.$inferSelect;

/**
 * The words of each live contact's search vector, one row per (word, contact), with what the global
 * search ranks a one-word search by (INCLUDE columns of the key, hand-written in migration 0035),
 * kept by statement-level triggers on `contacts`, as opportunity_search_terms (tools/contacts/search.ts).
 */
export const contactSearchTerms = pgTable('contact_search_terms', searchTermColumns('contact_id'), (t) => [
  primaryKey({ columns: [t.orgId, t.term, t.recordId] }),
]);
