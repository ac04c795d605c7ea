// The custom activity types area's table: activity types an organization designs.
import { sql } from 'drizzle-orm';
import { jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, id, orgId, updatedAt } from '../../core/db/schema.ts';
import type { CustomFieldDef } from '../custom-objects/tables.ts';

export const customActivityTypes = pgTable(
  'custom_activity_types',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    description: text('description'),
    fields: jsonb('fields').$type<CustomFieldDef[]>().notNull().default([]),
    createdBy: text('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('custom_activity_types_name_uq').on(t.orgId, sql`lower(${t.name})`)],
);

export type CustomActivityTypeRow = typeof customActivityTypes.$inferSelect;
