// Call monitoring: a supervisor joins a live forwarded call's conference `call-<CallSid>` from their
// own phone, through the provider (listen: muted; whisper: coaching the owner's leg, heard by the
// owner alone; barge: unmuted, heard by both), and leaves it again. Each session is a
// `call_monitors` row. The provider's request may take seconds, so it runs in the tool's `outside`
// step with short reads of its own; the handler records what the provider did.
import { and, asc, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { AppError, notFound, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { type ConferenceParticipant, TelephonyError } from '../../core/telephony.ts';
import type { OutsideContext } from '../../core/tool.ts';
import { requireTelephony } from '../telephony/lookups.ts';
import { STATUS_RANK } from './store.ts';
import { type CallMonitorRow, type CallRow, callMonitors, calls } from './tables.ts';

export const MONITOR_MODES = ['listen', 'whisper', 'barge'] as const;
export type MonitorMode = (typeof MONITOR_MODES)[number];

export const monitorSchema = z
  .object({
    _id: z.string().describe('Monitor session id'),
    call_sid: z.string().describe('Call monitored'),
    participant_call_sid: z.string().describe("Supervisor's leg in the conference; stop takes it"),
    mode: z.enum(MONITOR_MODES).describe('listen, whisper or barge'),
    supervisor_phone: z.string().describe('Phone dialled'),
    started_by: z.string().nullable().describe('User who started it'),
    started_at: z.string().describe('Start (ISO 8601)'),
    ended_at: z.string().nullable().describe('End, or null while on'),
  })
  .describe('A call monitor session');
export type MonitorRecord = z.output<typeof monitorSchema>;

function serializeMonitor(row: CallMonitorRow): MonitorRecord {
  return {
    _id: row.id,
    call_sid: row.callSid,
    participant_call_sid: row.participantCallSid,
    mode: MONITOR_MODES.find((m) => m === row.mode) ?? 'listen',
    supervisor_phone: row.supervisorPhone,
    started_by: row.startedBy,
    started_at: row.startedAt.toISOString(),
    ended_at: row.endedAt === null ? null : row.endedAt.toISOString(),
  };
}

const notMonitorable = (message: string, reason: string) =>
  new AppError('call_not_monitorable', { message, extra: { reason } });

/** The call an input names by `call_sid` or `activity_id`, or the 404 (another organization's too). */
async function namedCall(
  db: Executor,
  orgId: string,
  input: { call_sid?: string | undefined; activity_id?: string | undefined },
): Promise<CallRow> {
  if (input.call_sid === undefined && input.activity_id === undefined)
    throw validationError([
      { field: 'call_sid', message: 'call_sid or activity_id is required', code: 'required' },
      { field: 'activity_id', message: 'call_sid or activity_id is required', code: 'required' },
    ]);
  const conditions = [eq(calls.orgId, orgId)];
  if (input.call_sid !== undefined) conditions.push(eq(calls.callSid, input.call_sid));
  if (input.activity_id !== undefined) conditions.push(eq(calls.activityId, input.activity_id));
  const [row] = await db
    .select()
    .from(calls)
    .where(and(...conditions))
    .limit(1);
  if (!row) throw notFound('Call');
  return row;
}

const FINAL = STATUS_RANK.completed ?? 4;

/** The provider's failure as the API's: a conference gone is not monitorable; anything else a 502. */
function providerError(err: unknown): never {
  if (!(err instanceof TelephonyError)) throw err;
  if (err.status === 404)
    throw notMonitorable('The call has no conference to join any more', 'conference_gone');
  throw new AppError('telephony_unavailable', {
    message: `The telephony provider did not add the participant: ${err.message}`,
  });
}

export interface StartInput {
  call_sid?: string | undefined;
  activity_id?: string | undefined;
  mode: MonitorMode;
  supervisor_phone: string;
}

export interface Started {
  call: CallRow;
  participant: ConferenceParticipant;
}

/** The outside step of start_call_monitor: checks the call, then adds the supervisor through the provider. */
export async function addMonitor(input: StartInput, ctx: OutsideContext): Promise<Started> {
  const orgId = ctx.auth.orgId;
  const { call, credentials, from } = await ctx.read(async (db) => {
    const call = await namedCall(db, orgId, input);
    if (call.statusRank >= FINAL) throw notMonitorable(`The call is over (${call.status})`, 'call_ended');
    if (call.conferenceName === null)
      throw notMonitorable(
        'The call is not in a conference (only forwarded calls can be monitored)',
        'no_conference',
      );
    if (input.mode === 'whisper' && call.ownerLegSid === null)
      throw notMonitorable("The owner's leg is not in the conference: nobody to whisper to", 'no_owner_leg');
    return { call, credentials: await requireTelephony(db, ctx.services, orgId), from: call.toNumber };
  });
  const conference = call.conferenceName ?? '';
  try {
    const participant = await ctx.services.telephony.addParticipant(credentials, {
      conference,
      from,
      to: input.supervisor_phone,
      muted: input.mode === 'listen',
      ...(input.mode === 'whisper' ? { coaching: true, callSidToCoach: call.ownerLegSid ?? '' } : {}),
      label: `monitor-${input.mode}`,
    });
    return { call, participant };
  } catch (err) {
    return providerError(err);
  }
}

/** Records the started session. */
export async function recordMonitor(
  db: Executor,
  orgId: string,
  userId: string,
  started: Started,
  input: StartInput,
  now: Date,
): Promise<MonitorRecord> {
  const [row] = await db
    .insert(callMonitors)
    .values({
      id: newId(now),
      orgId,
      callId: started.call.id,
      callSid: started.call.callSid,
      participantCallSid: started.participant.callSid,
      mode: input.mode,
      supervisorPhone: input.supervisor_phone,
      startedBy: userId,
      startedAt: now,
    })
    .returning();
  if (!row) throw new Error('call monitor not recorded');
  return serializeMonitor(row);
}

export interface StopInput {
  activity_id?: string | undefined;
  call_sid?: string | undefined;
  participant_call_sid: string;
}

/** The organization's live monitor session of that participant (and call, when named), or the 404. */
async function liveMonitor(
  db: Executor,
  orgId: string,
  input: StopInput,
): Promise<{ monitor: CallMonitorRow; call: CallRow }> {
  const [found] = await db
    .select({ monitor: callMonitors, call: calls })
    .from(callMonitors)
    .innerJoin(calls, eq(calls.id, callMonitors.callId))
    .where(
      and(
        eq(callMonitors.orgId, orgId),
        eq(callMonitors.participantCallSid, input.participant_call_sid),
        isNull(callMonitors.endedAt),
      ),
    )
    .limit(1);
  if (
    !found ||
    (input.call_sid !== undefined && found.call.callSid !== input.call_sid) ||
    (input.activity_id !== undefined && found.call.activityId !== input.activity_id)
  )
    throw notFound('Call monitor participant');
  return found;
}

/** The outside step of stop_call_monitor: removes the supervisor's leg through the provider. */
export async function removeMonitor(input: StopInput, ctx: OutsideContext): Promise<{ monitorId: string }> {
  const orgId = ctx.auth.orgId;
  const { monitor, call, credentials } = await ctx.read(async (db) => ({
    ...(await liveMonitor(db, orgId, input)),
    credentials: await requireTelephony(db, ctx.services, orgId),
  }));
  try {
    await ctx.services.telephony.removeParticipant(
      credentials,
      call.conferenceName ?? '',
      monitor.participantCallSid,
    );
  } catch (err) {
    if (!(err instanceof TelephonyError)) throw err;
    if (err.status === 404) {
      // Gone on the provider's side (hung up, conference over): the session is over here too.
      await ctx.read((db) => endMonitor(db, orgId, monitor.id, ctx.auth.userId, ctx.now));
      throw notFound('Call monitor participant');
    }
    throw new AppError('telephony_unavailable', {
      message: `The telephony provider did not remove the participant: ${err.message}`,
    });
  }
  return { monitorId: monitor.id };
}

/** Ends a session (once). */
export async function endMonitor(
  db: Executor,
  orgId: string,
  id: string,
  userId: string,
  now: Date,
): Promise<void> {
  await db
    .update(callMonitors)
    .set({ endedAt: now, endedBy: userId, updatedAt: now })
    .where(and(eq(callMonitors.orgId, orgId), eq(callMonitors.id, id), isNull(callMonitors.endedAt)));
}

/** The monitor sessions of a call, oldest first. */
export async function monitorsOfCall(db: Executor, orgId: string, callId: string): Promise<MonitorRecord[]> {
  const rows = await db
    .select()
    .from(callMonitors)
    .where(and(eq(callMonitors.orgId, orgId), eq(callMonitors.callId, callId)))
    .orderBy(asc(callMonitors.startedAt), asc(callMonitors.id));
  return rows.map(serializeMonitor);
}
