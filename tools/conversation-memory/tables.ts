import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, orgId, updatedAt } from '../../core/db/schema.ts';
import { leads } from '../leads/tables.ts';

/** A promise made in a conversation with a lead, kept in its conversation memory. */
export interface Commitment {
  text: string;
  due_at: string | null;
  status: 'open' | 'kept' | 'missed';
  note: string | null;
  created_at: string;
  created_by: string | null;
  /** When it was marked kept or missed. */
  resolved_at: string | null;
}

/** What assistants remember of the conversations with a lead: a summary and the commitments made. */
export const conversationMemories = pgTable('conversation_memories', {
  leadId: text('lead_id')
    .primaryKey()
    .references(() => leads.id, { onDelete: 'cascade' }),
  orgId: orgId(),
  summary: text('summary'),
  commitments: jsonb('commitments').$type<Commitment[]>().notNull().default([]),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export type ConversationMemoryRow = typeof conversationMemories.$inferSelect;
