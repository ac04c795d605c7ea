// The smart views area's tables: saved lead filters, and the facts that narrow a view's leads.
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { byteOrderedText, createdAt, id, orgId, updatedAt } from '../../core/db/schema.ts';

/** One saved filter over leads. `query` and `sort` are stored as validated by the smart-view tools. */
export const smartViews = pgTable(
  'smart_views',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    scope: text('scope').notNull().default('leads'),
    query: jsonb('query').$type<Record<string, unknown>>().notNull(),
    sort: jsonb('sort').$type<{ field: string; direction: number } | null>(),
    displayColumns: text('display_columns').array().notNull().default(sql`'{}'::text[]`),
    visibility: text('visibility').notNull().default('private'),
    /** The creator; a private view is visible to this user only. */
    ownerId: text('owner_id').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('smart_views_org_idx').on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
  ],
);

export type SmartViewRow = typeof smartViews.$inferSelect;

/**
 * Equality facts of the live leads and their live activities, one row per (fact, lead, source), kept
 * by statement-level triggers on `leads` and `activities` (migration 0033): `smart_view_fact(scope,
 * key, value)` of every string value of a lead's additional properties (scope `custom`, source '')
 * and of a live activity's fields (scope `activity:<type>` or `activity:custom:<type id>`, source the
 * activity's id), the value lower-cased and the whole fact hashed when long. A view's equality filter
 * on such a value reads the leads holding its fact as one index range instead of evaluating jsonb on
 * every lead (query/compile.ts `factCandidates`). A fact short enough to be kept as text is the
 * filter's predicate itself, so the view does not test it again; a hashed one is only a necessary
 * condition, and the filter's own predicate decides.
 */
export const smartViewFacts = pgTable(
  'smart_view_facts',
  {
    orgId: orgId(),
    fact: byteOrderedText('fact').notNull(),
    leadId: text('lead_id').notNull(),
    /** The activity the fact comes from, or '' for the lead's own additional properties. */
    sourceId: text('source_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.fact, t.leadId, t.sourceId] })],
);
