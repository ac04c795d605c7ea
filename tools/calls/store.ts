// The calls store: an incoming call recorded once per call SID, its statuses applied by rank (a late
// older status or a repeat changes nothing), and the call activity a call becomes when it ends
// (once: the activity's id is kept on the call, and the activities area emits `call.completed` with
// it); the read side (one call, the list) the tools serve.
import { and, asc, count, desc, eq, isNull, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { users } from '../../core/db/schema.ts';
import { notFound } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso, offsetOf, type Page, paged } from '../../core/schemas.ts';
import { actorAuth, actorContext } from '../../core/system-actor.ts';
import { insertActivity } from '../activities/store.ts';
import { liveNumberOf } from '../phone-numbers/lookups.ts';
import { type CallTranscript, transcriptOfCall } from '../voice-relay/lookups.ts';
import { type CallMonitorRow, type CallRow, callMonitors, calls } from './tables.ts';

/** The provider's call statuses in the order a call goes through them; the ends share the last rank. */
export const STATUS_RANK: Readonly<Record<string, number>> = {
  queued: 0,
  initiated: 1,
  ringing: 2,
  'in-progress': 3,
  completed: 4,
  busy: 4,
  failed: 4,
  'no-answer': 4,
  canceled: 4,
};
const FINAL_RANK = 4;

/** The call activity's outcome for each way a call ends. */
const OUTCOME: Readonly<Record<string, 'connected' | 'no_answer' | 'busy' | 'failed'>> = {
  completed: 'connected',
  busy: 'busy',
  failed: 'failed',
  'no-answer': 'no_answer',
  canceled: 'no_answer',
};

export const callSchema = z
  .object({
    _id: z.string().describe('Call id'),
    call_sid: z.string().describe('Provider call SID'),
    direction: z.string().describe('inbound'),
    from: z.string().describe('Caller number'),
    to: z.string().describe('Number called (E.164)'),
    phone_number_id: z.string().nullable().describe('Phone number called'),
    lead_id: z.string().nullable().describe('Lead of the contact with the caller number, or null'),
    agent_id: z.string().nullable().describe('Voice agent that answered, or null'),
    answered_by: z.enum(['agent', 'forward', 'nobody']).describe('agent, forward (conference) or nobody'),
    status: z.string().describe('Provider status: ringing, in-progress, completed, busy, failed, ...'),
    started_at: z.string().describe('Start (ISO 8601)'),
    ended_at: z.string().nullable().describe('End, or null while live'),
    duration_seconds: z.number().int().nullable().describe('Length in seconds'),
    recording_url: z.string().nullable().describe('Recording URL'),
    conference_name: z.string().nullable().describe('Conference the caller waits in, when forwarded'),
    owner_leg_sid: z.string().nullable().describe("SID of the owner's leg in the conference"),
    owner_leg_error: z.string().nullable().describe("Why the owner's leg failed, or null"),
    activity_id: z.string().nullable().describe('The call activity, once ended'),
  })
  .describe('A call');
export type CallRecord = z.output<typeof callSchema>;

export type AnsweredBy = CallRecord['answered_by'];

function serializeCall(row: CallRow): CallRecord {
  return {
    _id: row.id,
    call_sid: row.callSid,
    direction: row.direction,
    from: row.fromNumber,
    to: row.toNumber,
    phone_number_id: row.phoneNumberId,
    lead_id: row.leadId,
    agent_id: row.agentId,
    answered_by: row.answeredBy === 'agent' || row.answeredBy === 'forward' ? row.answeredBy : 'nobody',
    status: row.status,
    started_at: row.startedAt.toISOString(),
    ended_at: iso(row.endedAt),
    duration_seconds: row.durationSeconds,
    recording_url: row.recordingUrl,
    conference_name: row.conferenceName,
    owner_leg_sid: row.ownerLegSid,
    owner_leg_error: row.ownerLegError,
    activity_id: row.activityId,
  };
}

export interface NewInboundCall {
  orgId: string;
  callSid: string;
  from: string;
  to: string;
  status: string;
  phoneNumberId: string;
  leadId: string | null;
  agentId: string | null;
  answeredBy: AnsweredBy;
  conferenceName: string | null;
  now: Date;
}

/**
 * Records an incoming call; a repeated voice hook for the same call SID records nothing and answers
 * the row the first one wrote, with `created` false.
 */
export async function recordInboundCall(
  db: Executor,
  call: NewInboundCall,
): Promise<{ row: CallRow; created: boolean }> {
  const [row] = await db
    .insert(calls)
    .values({
      id: newId(call.now),
      orgId: call.orgId,
      callSid: call.callSid,
      direction: 'inbound',
      fromNumber: call.from,
      toNumber: call.to,
      phoneNumberId: call.phoneNumberId,
      leadId: call.leadId,
      agentId: call.agentId,
      answeredBy: call.answeredBy,
      status: call.status,
      statusRank: STATUS_RANK[call.status] ?? STATUS_RANK.ringing ?? 2,
      startedAt: call.now,
      conferenceName: call.conferenceName,
    })
    .onConflictDoNothing()
    .returning();
  if (row) return { row, created: true };
  const existing = await callBySid(db, call.orgId, call.callSid);
  if (!existing) throw new Error(`call ${call.callSid} conflicts with another organization's call`);
  return { row: existing, created: false };
}

/** The organization's call with this SID, or null; `lock` takes the row for update. */
async function callBySid(
  db: Executor,
  orgId: string,
  callSid: string,
  lock = false,
): Promise<CallRow | null> {
  const query = db
    .select()
    .from(calls)
    .where(and(eq(calls.orgId, orgId), eq(calls.callSid, callSid)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  return row ?? null;
}

/** Keeps what became of the owner's leg of a forwarded call. */
export async function recordOwnerLeg(
  db: Executor,
  orgId: string,
  callId: string,
  leg: { sid: string } | { error: string },
): Promise<void> {
  await db
    .update(calls)
    .set(
      'sid' in leg
        ? { ownerLegSid: leg.sid, updatedAt: new Date() }
        : { ownerLegError: leg.error, updatedAt: new Date() },
    )
    .where(and(eq(calls.orgId, orgId), eq(calls.id, callId)));
}

export interface StatusUpdate {
  callSid: string;
  status: string;
  durationSeconds: number | null;
  recordingUrl: string | null;
  now: Date;
}

export type StatusOutcome = 'unknown_call' | 'applied' | 'ignored';

/**
 * Applies one status callback to the organization's call: a status of a higher rank than the
 * recorded one replaces it; a repeat or an older one changes nothing (a duration or recording URL it
 * carries is still kept when the call had none). The first end of the call makes its call activity
 * (when the call has a lead), in the same transaction.
 */
export async function applyCallStatus(
  db: Executor,
  orgId: string,
  update: StatusUpdate,
  logger: { warn(obj: object, msg: string): void },
): Promise<StatusOutcome> {
  const row = await callBySid(db, orgId, update.callSid, true);
  if (!row) return 'unknown_call';
  const rank = STATUS_RANK[update.status];
  const newer = rank !== undefined && rank > row.statusRank;
  const set: Partial<typeof calls.$inferInsert> = {};
  if (update.durationSeconds !== null && row.durationSeconds === null)
    set.durationSeconds = update.durationSeconds;
  if (update.recordingUrl !== null && row.recordingUrl === null) set.recordingUrl = update.recordingUrl;
  if (newer) {
    set.status = update.status;
    set.statusRank = rank;
    if (rank === FINAL_RANK) set.endedAt = update.now;
  }
  if (Object.keys(set).length === 0) return 'ignored';
  set.updatedAt = update.now;
  const [after] = await db.update(calls).set(set).where(eq(calls.id, row.id)).returning();
  if (newer && rank === FINAL_RANK && after && after.activityId === null && after.leadId !== null) {
    const activityId = await callActivity(db, after, update.now, logger);
    if (activityId !== null) await db.update(calls).set({ activityId }).where(eq(calls.id, row.id));
  }
  return newer ? 'applied' : 'ignored';
}

/** The user a call's activity is by: the number's owner, else the organization's first active owner. */
async function actorOfCall(db: Executor, row: CallRow): Promise<string | null> {
  const number = row.phoneNumberId === null ? null : await liveNumberOf(db, row.orgId, row.phoneNumberId);
  if (number?.ownerId) return number.ownerId;
  const [owner] = await db
    .select({ id: users.id })
    .from(users)
    .where(
      and(
        eq(users.orgId, row.orgId),
        eq(users.role, 'owner'),
        eq(users.status, 'active'),
        isNull(users.deletedAt),
      ),
    )
    .orderBy(asc(users.createdAt), asc(users.id))
    .limit(1);
  return owner?.id ?? null;
}

const MAX_NOTE = 20_000;

/** The transcript as the activity's note: one line per spoken turn. */
function transcriptNote(transcript: CallTranscript): string | null {
  const lines = transcript.turns
    .filter((turn) => turn.kind === 'caller' || turn.kind === 'agent')
    .map((turn) => `${turn.kind === 'caller' ? 'Caller' : 'Agent'}: ${turn.text}`);
  if (transcript.handoff) lines.push(`Handed to a person: ${transcript.handoff}`);
  if (lines.length === 0) return null;
  const note = `Transcript\n${lines.join('\n')}`;
  return note.length > MAX_NOTE ? `${note.slice(0, MAX_NOTE - 1)}…` : note;
}

/** The call's monitor sessions as lines of the activity's note, or null when it had none. */
function monitorNote(rows: readonly CallMonitorRow[]): string | null {
  if (rows.length === 0) return null;
  const lines = rows.map(
    (m) =>
      `${m.mode} by ${m.startedBy ?? 'unknown user'} from ${m.startedAt.toISOString()}` +
      `${m.endedAt === null ? '' : ` to ${m.endedAt.toISOString()}`} (participant ${m.participantCallSid})`,
  );
  return `Monitored\n${lines.join('\n')}`;
}

async function monitorRowsOfCall(db: Executor, orgId: string, callId: string): Promise<CallMonitorRow[]> {
  return db
    .select()
    .from(callMonitors)
    .where(and(eq(callMonitors.orgId, orgId), eq(callMonitors.callId, callId)))
    .orderBy(asc(callMonitors.startedAt), asc(callMonitors.id));
}

/** Logs the ended call as a call activity on its lead; null (logged) when nobody may act for it. */
async function callActivity(
  db: Executor,
  row: CallRow,
  now: Date,
  logger: { warn(obj: object, msg: string): void },
): Promise<string | null> {
  if (row.leadId === null) return null;
  const userId = await actorOfCall(db, row);
  const auth = userId === null ? null : await actorAuth(db, row.orgId, userId);
  if (auth === null) {
    logger.warn(
      { callSid: row.callSid, orgId: row.orgId },
      'call ended without an active user to log its activity',
    );
    return null;
  }
  const transcript = await transcriptOfCall(db, row.orgId, row.callSid);
  const parts = [
    transcript === null ? null : transcriptNote(transcript),
    monitorNote(await monitorRowsOfCall(db, row.orgId, row.id)),
  ].filter((part) => part !== null);
  const joined = parts.join('\n\n');
  const note =
    parts.length === 0 ? null : joined.length > MAX_NOTE ? `${joined.slice(0, MAX_NOTE - 1)}…` : joined;
  const activity = await insertActivity(actorContext(db, auth, now), {
    type: 'call',
    lead_id: row.leadId,
    direction: 'inbound',
    status: 'completed',
    duration_seconds: row.durationSeconds,
    outcome: OUTCOME[row.status] ?? null,
    // The activity keeps https recordings only (its own rule); Twilio's are https.
    recording_url: row.recordingUrl?.startsWith('https://') ? row.recordingUrl : null,
    phone: row.fromNumber.slice(0, 64),
    ...(note === null ? {} : { note }),
    occurred_at: row.startedAt.toISOString(),
  });
  return activity._id;
}

/** One call of the organization, or the 404. */
export async function getCallRecord(db: Executor, orgId: string, id: string): Promise<CallRecord> {
  const [row] = await db
    .select()
    .from(calls)
    .where(and(eq(calls.orgId, orgId), eq(calls.id, id)))
    .limit(1);
  if (!row) throw notFound('Call');
  return serializeCall(row);
}

/** The organization's calls, newest first, optionally of one lead or in one status. */
export async function listCallsPage(
  db: Executor,
  orgId: string,
  params: Page & { lead_id?: string | undefined; status?: string | undefined; call_sid?: string | undefined },
) {
  const conditions: SQL[] = [eq(calls.orgId, orgId)];
  if (params.lead_id) conditions.push(eq(calls.leadId, params.lead_id));
  if (params.status) conditions.push(eq(calls.status, params.status));
  if (params.call_sid) conditions.push(eq(calls.callSid, params.call_sid));
  const where = and(...conditions);
  const rows = await db
    .select()
    .from(calls)
    .where(where)
    .orderBy(desc(calls.startedAt), desc(calls.id))
    .limit(params.limit)
    .offset(offsetOf(params));
  const [total] = await db.select({ n: count() }).from(calls).where(where);
  return paged('calls', rows.map(serializeCall), total?.n ?? 0, params);
}
