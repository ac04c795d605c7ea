// The phone numbers area's table: an organization's numbers (E.164), what each can carry, the voice
// agent that answers it, where a call goes when no agent does, and its owner. A live number is unique
// across the whole service: the public call and message hooks find the organization from the number
// dialled.
import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, updatedAt } from '../../core/db/schema.ts';
import { voiceAgents } from '../voice-agents/tables.ts';

export const phoneNumbers = pgTable(
  'phone_numbers',
  {
    id: id(),
    orgId: orgId(),
    /** E.164: `+` then 7-15 digits, the first not 0. */
    number: text('number').notNull(),
    label: text('label'),
    voice: boolean('voice').notNull().default(true),
    sms: boolean('sms').notNull().default(true),
    whatsapp: boolean('whatsapp').notNull().default(false),
    /**
     * The agent that answers an incoming call. Kept while the agent is paused or trashed (the call
     * then goes to forward_to); cleared when the agent is deleted for good.
     */
    defaultVoiceAgentId: text('default_voice_agent_id').references(() => voiceAgents.id, {
      onDelete: 'set null',
    }),
    /** E.164 number an incoming call is dialled to when no agent answers. */
    forwardTo: text('forward_to'),
    ownerId: text('owner_id'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('phone_numbers_live_number_idx').on(t.number).where(sql`${t.deletedAt} is null`),
    index('phone_numbers_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('phone_numbers_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
    index('phone_numbers_voice_agent_idx')
      .on(t.defaultVoiceAgentId)
      .where(sql`${t.defaultVoiceAgentId} is not null`),
  ],
);

export type PhoneNumberRow = typeof phoneNumbers.$inferSelect;
