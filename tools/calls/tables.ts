// The calls area's table: one row per call the provider told us about (an incoming call's voice
// hook opens it), its status with a rank (statuses arrive out of order and repeated; the higher
// rank wins), what the completed call left (duration, recording) and the call activity it became.
import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, id, orgId, ts, updatedAt } from '../../core/db/schema.ts';
import { activities } from '../activities/tables.ts';
import { leads } from '../leads/tables.ts';
import { phoneNumbers } from '../phone-numbers/tables.ts';
import { voiceAgents } from '../voice-agents/tables.ts';

export const calls = pgTable(
  'calls',
  {
    id: id(),
    orgId: orgId(),
    /** The provider's call SID (CA + 32 hex): one row per call. */
    callSid: text('call_sid').notNull(),
    /** inbound (the only direction recorded so far). */
    direction: text('direction').notNull(),
    fromNumber: text('from_number').notNull(),
    toNumber: text('to_number').notNull(),
    phoneNumberId: text('phone_number_id').references(() => phoneNumbers.id, { onDelete: 'set null' }),
    leadId: text('lead_id').references(() => leads.id, { onDelete: 'set null' }),
    /** The voice agent that answered it, when one did. */
    agentId: text('agent_id').references(() => voiceAgents.id, { onDelete: 'set null' }),
    /** How the call was answered: agent, forward (conference) or nobody. */
    answeredBy: text('answered_by').notNull(),
    status: text('status').notNull(),
    /** The status's rank (store.ts STATUS_RANK): a status of a lower rank never overwrites. */
    statusRank: integer('status_rank').notNull(),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at'),
    durationSeconds: integer('duration_seconds'),
    recordingUrl: text('recording_url'),
    /** `call-<CallSid>` when the caller was put in a conference (forwarding), else null. */
    conferenceName: text('conference_name'),
    /** The SID of the owner's leg dialled into the conference, when the provider created it. */
    ownerLegSid: text('owner_leg_sid'),
    /** Why the owner's leg could not be created, when it could not. */
    ownerLegError: text('owner_leg_error'),
    activityId: text('activity_id').references(() => activities.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('calls_call_sid_idx').on(t.callSid),
    index('calls_org_started_idx').on(t.orgId, t.startedAt.desc(), t.id.desc()),
    index('calls_lead_idx').on(t.leadId),
    index('calls_phone_number_idx').on(t.phoneNumberId),
    index('calls_agent_idx').on(t.agentId),
    index('calls_activity_idx').on(t.activityId),
  ],
);

export type CallRow = typeof calls.$inferSelect;

/** One supervisor's monitoring of a forwarded call: a participant the server added to its conference. */
export const callMonitors = pgTable(
  'call_monitors',
  {
    id: id(),
    orgId: orgId(),
    callId: text('call_id')
      .notNull()
      .references(() => calls.id, { onDelete: 'cascade' }),
    callSid: text('call_sid').notNull(),
    /** The supervisor's leg in the conference (the provider's participant call SID). */
    participantCallSid: text('participant_call_sid').notNull(),
    /** listen | whisper | barge */
    mode: text('mode').notNull(),
    supervisorPhone: text('supervisor_phone').notNull(),
    startedBy: text('started_by'),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at'),
    endedBy: text('ended_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('call_monitors_participant_idx').on(t.orgId, t.participantCallSid),
    index('call_monitors_call_idx').on(t.callId, t.startedAt),
  ],
);

export type CallMonitorRow = typeof callMonitors.$inferSelect;
