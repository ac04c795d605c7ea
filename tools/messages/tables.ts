// The messages area's table: every SMS and WhatsApp message sent or received through the
// organization's provider account. An outbound row is also the sender's leased row
// (core/leased-rows.ts): `status` queued (waiting for its attempt) or sending (claimed), with
// `next_attempt_at` as its due time; once the provider answered, the due time is null and `status`
// follows the provider's status callbacks. The trash columns are kept for the record helper and are
// never set: a message is a record of what was said, not trashed.
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, updatedAt } from '../../core/db/schema.ts';

export const messages = pgTable(
  'messages',
  {
    id: id(),
    orgId: orgId(),
    channel: text('channel').$type<'sms' | 'whatsapp'>().notNull(),
    direction: text('direction').$type<'inbound' | 'outbound'>().notNull(),
    /** The lead the message belongs to; null for an inbound message from an unknown number. */
    leadId: text('lead_id'),
    /** The organization's number it went out from or came in to; null when the number is unknown. */
    phoneNumberId: text('phone_number_id'),
    /** E.164, without the `whatsapp:` channel prefix. */
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address').notNull(),
    body: text('body'),
    templateSid: text('template_sid'),
    templateVariables: jsonb('template_variables').$type<Record<string, string>>(),
    /** The provider's message SID (SM...), once it accepted the message; an inbound one's own. */
    sid: text('sid'),
    status: text('status').notNull(),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    /** The user who sent it (outbound); null for inbound. */
    userId: text('user_id'),
    activityId: text('activity_id'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('messages_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('messages_lead_idx').on(t.orgId, t.leadId, t.createdAt.desc()),
    // One row per provider message: a replayed inbound hook is a duplicate, ignored.
    uniqueIndex('messages_sid_idx').on(t.orgId, t.sid).where(sql`${t.sid} is not null`),
    // The WhatsApp window: the last inbound message from an address.
    index('messages_inbound_from_idx').on(t.orgId, t.channel, t.direction, t.fromAddress, t.createdAt.desc()),
    // The sweep: rows waiting or claimed, by due time.
    index('messages_due_idx').on(t.nextAttemptAt).where(sql`${t.status} in ('queued', 'sending')`),
  ],
);

export type MessageRow = typeof messages.$inferSelect;
