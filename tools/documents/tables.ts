// The document kit's one table: the last number given per organization and kind of numbered
// document (invoice, estimate). One counter table for every kind, so a new numbered document adds
// a kind, not a table (migration 0019 carried the two older counter tables over).
import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { orgId } from '../../core/db/schema.ts';

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
