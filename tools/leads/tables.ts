// The leads area's table: leads (the open-shaped core record). Its live count per organization is
// kept by the kernel's ledger (core/live-counts.ts, attached in migration 0031).
import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { byteOrderedText, createdAt, id, orgId, ts, tsvector, updatedAt } from '../../core/db/schema.ts';

export const leads = pgTable(
  'leads',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    description: text('description'),
    url: text('url'),
    status: text('status').notNull().default('new'),
    ownerId: text('owner_id'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    /** Additional properties of any type (the specification's open lead shape). */
    custom: jsonb('custom').$type<Record<string, unknown>>().notNull().default({}),
    convertedAt: ts('converted_at'),
    createdBy: text('created_by'),
    deletedAt: ts('deleted_at'),
    deletedBy: text('deleted_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    search: tsvector('search').generatedAlwaysAs(
      sql`to_tsvector('simple', coalesce(name, '') || ' ' || coalesce(description, '') || ' ' || coalesce(url, '') || ' ' || coalesce(status, ''))`,
    ),
  },
  (t) => [
    // Live leads in the default order (created_at DESC is NULLS FIRST in PostgreSQL, so the index
    // says so too, or the planner sorts every row); also serves the live count of an organization.
    index('leads_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('leads_live_updated_idx')
      .on(t.orgId, t.updatedAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('leads_org_owner_idx').on(t.orgId, t.ownerId),
    // Status filters of lists and smart views, and their counts (a status is ~15% of a large org).
    index('leads_live_status_idx').on(t.orgId, t.status).where(sql`${t.deletedAt} is null`),
    index('leads_search_idx').using('gin', t.search),
    // The `tag` filter of list_leads (`tags @> array[...]`).
    index('leads_tags_idx').using('gin', t.tags),
    // The trash list: only trashed rows, newest deleted first.
    index('leads_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

/**
 * The words of each live lead's search vector, one row per (word, lead), kept by statement-level
 * triggers on `leads` (migrations 0032, 0034). Its primary key answers "how many live leads match
 * these word prefixes" as an index-only range scan: the exact `total` of a lead search without reading
 * the leads heap, which a GIN index cannot avoid (bench/results.md, "Scale: search and smart views at
 * 1M leads"). The key also carries (INCLUDE, hand-written in 0034) what the global search ranks a
 * one-word search by, so it ranks from the index too (tools/leads/search.ts).
 */
export const leadSearchTerms = pgTable(
  'lead_search_terms',
  {
    orgId: orgId(),
    term: byteOrderedText('term').notNull(),
    leadId: text('lead_id').notNull(),
    /** The lead's vector reduced to this word, with its positions: ts_rank of a one-word query reads only these. */
    positions: tsvector('positions').notNull().default(sql`''::tsvector`),
    /** Whether lower(name) is this very word (the +1 of rankOf when the name is the whole query). */
    nameIsTerm: boolean('name_is_term').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.term, t.leadId] })],
);

export type LeadRow = typeof leads.$inferSelect;

/** The lead a child record hangs off; purging the lead removes the child with it. */
export const leadRef = (name = 'lead_id') => text(name).references(() => leads.id, { onDelete: 'cascade' });
