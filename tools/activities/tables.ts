// The activities area's table: a lead's timeline.
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, ts, updatedAt } from '../../core/db/schema.ts';
import { contacts } from '../contacts/tables.ts';
import { customActivityTypes } from '../custom-activity-types/tables.ts';
import { leadRef } from '../leads/tables.ts';

export const activities = pgTable(
  'activities',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef().notNull(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    /** note | call | email | meeting | custom */
    type: text('type').notNull(),
    customActivityTypeId: text('custom_activity_type_id').references(() => customActivityTypes.id),
    /** The user the activity is by (the caller unless given). */
    userId: text('user_id'),
    /** When it happened (a call's start, a meeting's start, an email's send time); newest first on the timeline. */
    occurredAt: ts('occurred_at').notNull().default(sql`now()`),
    /** The type's own fields: a call's direction/duration/outcome, an email's subject, a custom type's values. */
    fields: jsonb('fields').$type<Record<string, unknown>>().notNull().default({}),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('activities_timeline_idx')
      .on(t.orgId, t.leadId, t.occurredAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('activities_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    // "Has an activity of type X": smart views and lead health probe by (org, type, lead).
    index('activities_type_lead_idx').on(t.orgId, t.type, t.leadId).where(sql`${t.deletedAt} is null`),
    index('activities_custom_type_idx').on(t.orgId, t.customActivityTypeId),
    // FK cascades when a lead or a contact is purged from the trash.
    index('activities_lead_idx').on(t.leadId),
    index('activities_contact_idx').on(t.contactId),
    index('activities_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

export type ActivityRow = typeof activities.$inferSelect;
