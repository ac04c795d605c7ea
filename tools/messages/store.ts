// The messages store: the record shape, the list with its filters, and the reads the sender and the
// hooks share. A message is written by the send (send.ts) or by the inbound hook (hooks.ts), never
// edited through the API: only its status moves, by the sender and the provider's status callbacks.
import { and, desc, eq, gte, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { defineRecordTable, type ListParams, type PagedList } from '../../core/records.ts';
import { type MessageRow, messages } from './tables.ts';

export const CHANNELS = ['sms', 'whatsapp'] as const;
export type Channel = (typeof CHANNELS)[number];
export const DIRECTIONS = ['inbound', 'outbound'] as const;

/**
 * A message's statuses: the sender's (queued: waiting for its attempt; sending: an attempt runs;
 * unknown: the provider may or may not have taken it, never resent), the provider's (queued, sending,
 * sent, delivered, undelivered, failed, read) and received for an inbound one.
 */
const MESSAGE_STATUSES = [
  'queued',
  'sending',
  'sent',
  'delivered',
  'undelivered',
  'failed',
  'read',
  'received',
  'unknown',
] as const;

export const messageSchema = z
  .object({
    _id: z.string().describe('Message id'),
    channel: z.enum(CHANNELS).describe('sms or whatsapp'),
    direction: z.enum(DIRECTIONS).describe('outbound or inbound'),
    lead_id: z.string().nullable().describe('Its lead; null for an unknown sender'),
    from_phone_number_id: z
      .string()
      .nullable()
      .describe("The organization's number it used; null when unknown"),
    from: z.string().describe('Sender, E.164'),
    to: z.string().describe('Recipient, E.164'),
    body: z.string().nullable().describe('The text'),
    template_sid: z.string().nullable().describe('WhatsApp template; null for none'),
    template_variables: z
      .record(z.string(), z.string())
      .nullable()
      .describe('Template variables; null for none'),
    sid: z.string().nullable().describe('Provider SID; null until accepted'),
    status: z
      .enum(MESSAGE_STATUSES)
      .describe(
        'queued, sending, sent, delivered, undelivered, failed, read, received, unknown (not resent)',
      ),
    error_code: z.string().nullable().describe("Provider's error code; null when none"),
    error_message: z.string().nullable().describe('Why it failed; null when none'),
    user_id: z.string().nullable().describe('Sender user; null for inbound'),
    activity_id: z.string().nullable().describe('Its activity on the lead; null when none'),
    created_at: z.string().describe('Sent or received (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('An SMS or WhatsApp message');
export type MessageRecord = z.output<typeof messageSchema>;

const asStatus = (value: string): MessageRecord['status'] =>
  MESSAGE_STATUSES.find((s) => s === value) ?? 'unknown';

export function serializeMessage(row: MessageRow): MessageRecord {
  return {
    _id: row.id,
    channel: row.channel,
    direction: row.direction,
    lead_id: row.leadId,
    from_phone_number_id: row.phoneNumberId,
    from: row.fromAddress,
    to: row.toAddress,
    body: row.body,
    template_sid: row.templateSid,
    template_variables: row.templateVariables,
    sid: row.sid,
    status: asStatus(row.status),
    error_code: row.errorCode,
    error_message: row.errorMessage,
    user_id: row.userId,
    activity_id: row.activityId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The messages table on the record helper: one message (404 "Message not found") and the list. */
export const messageRecords = defineRecordTable<MessageRow>({
  label: 'Message',
  table: messages,
  select: (db) => db.select().from(messages).$dynamic(),
  update: (db, set, where) => db.update(messages).set(set).where(where).returning(),
});

export interface MessageFilters {
  lead_id?: string | undefined;
  channel?: Channel | undefined;
  direction?: (typeof DIRECTIONS)[number] | undefined;
}

/** The organization's messages, newest first, filtered by lead, channel and direction. */
export function listMessagesPage(
  db: Executor,
  orgId: string,
  params: ListParams & MessageFilters,
): Promise<PagedList<'messages', MessageRecord>> {
  const conditions: SQL[] = messageRecords.liveConditions(orgId);
  if (params.lead_id) conditions.push(eq(messages.leadId, params.lead_id));
  if (params.channel) conditions.push(eq(messages.channel, params.channel));
  if (params.direction) conditions.push(eq(messages.direction, params.direction));
  return messageRecords.list(db, 'messages', serializeMessage, params, {
    conditions,
    sortColumns: { created_at: messages.createdAt },
  });
}

/** When the last inbound WhatsApp message from `address` arrived at or after `since`, or null. */
export async function lastInboundWhatsapp(
  db: Executor,
  orgId: string,
  address: string,
  since: Date,
): Promise<Date | null> {
  const [row] = await db
    .select({ at: messages.createdAt })
    .from(messages)
    .where(
      and(
        eq(messages.orgId, orgId),
        eq(messages.channel, 'whatsapp'),
        eq(messages.direction, 'inbound'),
        eq(messages.fromAddress, address),
        gte(messages.createdAt, since),
      ),
    )
    .orderBy(desc(messages.createdAt))
    .limit(1);
  return row?.at ?? null;
}
