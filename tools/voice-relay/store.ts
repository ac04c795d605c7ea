// The voice relay store: a call's session row opened at `setup`, its transcript appended turn by
// turn while the call goes on (a crash loses at most the turn being spoken), closed when the socket
// closes; and the read side (one session, the list) the tools serve.
import { and, count, desc, eq, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { notFound } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso, offsetOf, type Page, paged } from '../../core/schemas.ts';
import { type TranscriptTurn, type VoiceSessionRow, voiceSessions } from './tables.ts';

export type { TranscriptTurn } from './tables.ts';

const turnSchema = z
  .object({
    kind: z.string().describe('caller, agent, interrupt, dtmf, error or end'),
    text: z.string().describe('What was said, pressed or happened'),
    at: z.string().describe('When (ISO 8601)'),
    source: z.enum(['model', 'rules']).optional().describe('Agent turns: model or rules fallback'),
    model: z.string().optional().describe('Agent turns from a model: its name'),
    interrupted: z.boolean().optional().describe('Agent turns the caller cut short'),
    lang: z.string().optional().describe('Caller turns: the language heard'),
  })
  .describe('One turn');

export const voiceSessionSchema = z
  .object({
    _id: z.string().describe('Session id'),
    agent_id: z.string().nullable().describe('Voice agent that answered'),
    call_sid: z.string().describe('Provider call SID'),
    session_id: z.string().describe('Provider relay session id'),
    from: z.string().nullable().describe('Caller number'),
    to: z.string().nullable().describe('Called number'),
    direction: z.string().nullable().describe('inbound or outbound'),
    started_at: z.string().describe('Start (ISO 8601)'),
    ended_at: z.string().nullable().describe('End; null while the call goes on'),
    handoff: z.string().nullable().describe('Why it was handed to a person, else null'),
    transcript: z.array(turnSchema).describe('Every turn in order'),
  })
  .describe('A voice agent call session');
export type VoiceSessionRecord = z.output<typeof voiceSessionSchema>;

function serializeVoiceSession(row: VoiceSessionRow): VoiceSessionRecord {
  return {
    _id: row.id,
    agent_id: row.agentId,
    call_sid: row.callSid,
    session_id: row.sessionId,
    from: row.fromNumber,
    to: row.toNumber,
    direction: row.direction,
    started_at: row.startedAt.toISOString(),
    ended_at: iso(row.endedAt),
    handoff: row.handoff,
    transcript: row.transcript,
  };
}

export interface NewSession {
  orgId: string;
  agentId: string;
  callSid: string;
  sessionId: string;
  from: string | null;
  to: string | null;
  direction: string | null;
  startedAt: Date;
}

/** Opens a call's session row; the id it answers is the one the turns are appended to. */
export async function openSession(db: Executor, session: NewSession): Promise<string> {
  const id = newId(session.startedAt);
  await db.insert(voiceSessions).values({
    id,
    orgId: session.orgId,
    agentId: session.agentId,
    callSid: session.callSid,
    sessionId: session.sessionId,
    fromNumber: session.from,
    toNumber: session.to,
    direction: session.direction,
    startedAt: session.startedAt,
  });
  return id;
}

/** Appends turns to a session's transcript in one statement (the row is never read back and rewritten). */
export async function appendTurns(
  db: Executor,
  orgId: string,
  id: string,
  turns: readonly TranscriptTurn[],
): Promise<void> {
  if (turns.length === 0) return;
  await db
    .update(voiceSessions)
    .set({
      transcript: sql`${voiceSessions.transcript} || ${JSON.stringify(turns)}::jsonb`,
      updatedAt: new Date(),
    })
    .where(and(eq(voiceSessions.orgId, orgId), eq(voiceSessions.id, id)));
}

/** Records the handoff's reason (the call goes to a person). */
export async function markHandoff(db: Executor, orgId: string, id: string, reason: string): Promise<void> {
  await db
    .update(voiceSessions)
    .set({ handoff: reason, updatedAt: new Date() })
    .where(and(eq(voiceSessions.orgId, orgId), eq(voiceSessions.id, id)));
}

/** Closes the session (the socket closed); a session already closed keeps its first end. */
export async function closeSession(db: Executor, orgId: string, id: string, endedAt: Date): Promise<void> {
  await db
    .update(voiceSessions)
    .set({
      endedAt: sql`coalesce(${voiceSessions.endedAt}, ${endedAt.toISOString()}::timestamptz)`,
      updatedAt: endedAt,
    })
    .where(and(eq(voiceSessions.orgId, orgId), eq(voiceSessions.id, id)));
}

/** One session of the organization, or the 404. */
export async function getVoiceSessionRecord(
  db: Executor,
  orgId: string,
  id: string,
): Promise<VoiceSessionRecord> {
  const [row] = await db
    .select()
    .from(voiceSessions)
    .where(and(eq(voiceSessions.orgId, orgId), eq(voiceSessions.id, id)))
    .limit(1);
  if (!row) throw notFound('Voice session');
  return serializeVoiceSession(row);
}

/** The organization's sessions, newest first, optionally of one call or one agent. */
export async function listVoiceSessionsPage(
  db: Executor,
  orgId: string,
  params: Page & { call_sid?: string | undefined; agent_id?: string | undefined },
) {
  const conditions: SQL[] = [eq(voiceSessions.orgId, orgId)];
  if (params.call_sid) conditions.push(eq(voiceSessions.callSid, params.call_sid));
  if (params.agent_id) conditions.push(eq(voiceSessions.agentId, params.agent_id));
  const where = and(...conditions);
  const rows = await db
    .select()
    .from(voiceSessions)
    .where(where)
    .orderBy(desc(voiceSessions.startedAt), desc(voiceSessions.id))
    .limit(params.limit)
    .offset(offsetOf(params));
  const [total] = await db.select({ n: count() }).from(voiceSessions).where(where);
  return paged('voice_sessions', rows.map(serializeVoiceSession), total?.n ?? 0, params);
}
