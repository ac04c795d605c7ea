// The smart views area's table: saved lead filters.
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, id, orgId, updatedAt } from '../../core/db/schema.ts';

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
