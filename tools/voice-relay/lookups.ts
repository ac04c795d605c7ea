// What other areas ask of the voice relay without reading its table (docs/architecture.md
// "Boundaries"): the transcript of a call a voice agent answered, for the call's activity.
import { and, asc, eq } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { type TranscriptTurn, voiceSessions } from './tables.ts';

export interface CallTranscript {
  agentId: string | null;
  /** Every turn of the call's relay sessions, in order. */
  turns: TranscriptTurn[];
  /** Why the call was handed to a person, or null. */
  handoff: string | null;
  startedAt: Date;
  endedAt: Date | null;
}

/** The transcript of a call (by its provider SID) in the organization, or null when no agent answered it. */
export async function transcriptOfCall(
  db: Executor,
  orgId: string,
  callSid: string,
): Promise<CallTranscript | null> {
  const rows = await db
    .select()
    .from(voiceSessions)
    .where(and(eq(voiceSessions.orgId, orgId), eq(voiceSessions.callSid, callSid)))
    .orderBy(asc(voiceSessions.startedAt), asc(voiceSessions.id));
  const first = rows[0];
  if (!first) return null;
  const last = rows.at(-1) ?? first;
  return {
    agentId: first.agentId,
    turns: rows.flatMap((row) => row.transcript),
    handoff: rows.findLast((row) => row.handoff !== null)?.handoff ?? null,
    startedAt: first.startedAt,
    endedAt: last.endedAt,
  };
}
