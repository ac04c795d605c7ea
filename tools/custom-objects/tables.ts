// The custom objects area's tables: definitions and their records.
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, updatedAt } from '../../core/db/schema.ts';

/** A field of a custom object or custom activity type definition. */
export interface CustomFieldDef {
  key: string;
  label: string;
  type: 'text' | 'number' | 'date' | 'boolean' | 'choice' | 'user' | 'lead';
  required: boolean;
  /** The allowed values of a `choice` field. */
  options?: string[];
}

export const customObjects = pgTable(
  'custom_objects',
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
  (t) => [uniqueIndex('custom_objects_name_uq').on(t.orgId, sql`lower(${t.name})`)],
);

export const customObjectRecords = pgTable(
  'custom_object_records',
  {
    id: id(),
    orgId: orgId(),
    objectId: text('object_id')
      .notNull()
      .references(() => customObjects.id, { onDelete: 'cascade' }),
    values: jsonb('values').$type<Record<string, unknown>>().notNull().default({}),
    ownerId: text('owner_id'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('custom_object_records_live_idx')
      .on(t.orgId, t.objectId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('custom_object_records_owner_idx').on(t.orgId, t.ownerId),
    index('custom_object_records_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

export type CustomObjectRow = typeof customObjects.$inferSelect;
export type CustomObjectRecordRow = typeof customObjectRecords.$inferSelect;
