// The voice relay area's table: one row per call a voice agent answered over ConversationRelay, its
// transcript (every turn as it happened, appended while the call goes on) and how it ended.
import { index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, id, orgId, ts, updatedAt } from '../../core/db/schema.ts';
import { voiceAgents } from '../voice-agents/tables.ts';

/** One turn of a call's transcript (tools/voice-relay/store.ts builds them). */
export interface TranscriptTurn {
  /** caller | agent | interrupt | dtmf | error | end */
  kind: string;
  text: string;
  at: string;
  /** For agent turns: model or rules. */
  source?: 'model' | 'rules';
  model?: string;
  /** For agent turns the caller cut short. */
  interrupted?: boolean;
  /** The caller's language of a prompt, when the provider sent one. */
  lang?: string;
}

export const voiceSessions = pgTable(
  'voice_sessions',
  {
    id: id(),
    orgId: orgId(),
    agentId: text('agent_id').references(() => voiceAgents.id, { onDelete: 'set null' }),
    callSid: text('call_sid').notNull(),
    sessionId: text('session_id').notNull(),
    fromNumber: text('from_number'),
    toNumber: text('to_number'),
    direction: text('direction'),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at'),
    transcript: jsonb('transcript').$type<TranscriptTurn[]>().notNull().default([]),
    /** The handoff's reason when the call was handed to a person, else null. */
    handoff: text('handoff'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('voice_sessions_session_idx').on(t.orgId, t.sessionId),
    index('voice_sessions_call_idx').on(t.orgId, t.callSid),
    index('voice_sessions_started_idx').on(t.orgId, t.startedAt.desc(), t.id.desc()),
    index('voice_sessions_agent_idx').on(t.agentId),
  ],
);

export type VoiceSessionRow = typeof voiceSessions.$inferSelect;
