// Call tools: read the organization's calls (list, get; calls are written by the provider's hooks
// only, hooks.ts), and monitor a live forwarded call (start, stop; monitor.ts).
import { z } from 'zod';
import { messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import {
  addMonitor,
  endMonitor,
  MONITOR_MODES,
  monitorSchema,
  monitorsOfCall,
  recordMonitor,
  removeMonitor,
} from './monitor.ts';
import { callSchema, getCallRecord, listCallsPage } from './store.ts';

const access = { kind: 'read', resource: 'telephony', permission: 'calls.view' } as const;
const closed = { openWorldHint: false } as const;

export const listCalls = defineTool({
  name: 'list_calls',
  title: 'List calls',
  description: 'Lists phone calls, newest first; filters `lead_id`, `status`, `call_sid`.',
  input: z.strictObject({
    page: z.coerce.number().int().min(1).default(1).describe('Page number, 1-based'),
    limit: z.coerce.number().int().min(1).max(100).default(25).describe('Items per page'),
    lead_id: objectId('lead').optional().describe('Only calls of this lead'),
    status: z
      .enum([
        'queued',
        'initiated',
        'ringing',
        'in-progress',
        'completed',
        'busy',
        'failed',
        'no-answer',
        'canceled',
      ])
      .optional()
      .describe('Only calls in this status'),
    call_sid: z.string().trim().min(1).max(64).optional().describe('Only this provider call SID'),
  }),
  output: pagedOutput('calls', callSchema),
  access,
  annotations: closed,
  toolset: 'telephony',
  handler: (input, { db, auth }) => listCallsPage(db, auth.orgId, input),
});

export const getCall = defineTool({
  name: 'get_call',
  title: 'Get a call',
  description: 'Returns one phone call by id: its status, duration, recording and monitor sessions.',
  input: z.strictObject({ id: objectId('call') }),
  output: z.object({
    call: callSchema,
    monitors: z.array(monitorSchema).describe('Its monitor sessions, oldest first'),
  }),
  access,
  annotations: closed,
  toolset: 'telephony',
  async handler(input, { db, auth }) {
    const call = await getCallRecord(db, auth.orgId, input.id);
    return { call, monitors: await monitorsOfCall(db, auth.orgId, call._id) };
  },
});

const monitorAccess = {
  kind: 'write',
  resource: 'telephony',
  permission: 'calls.monitor',
  feature: 'call_monitoring',
} as const;
const REACHES =
  "dials the supervisor's own phone into the call's conference through the telephony provider; nothing is sent to anyone else";
const callSidField = z.string().trim().min(1).max(64).describe('Provider call SID');
const activityIdField = objectId('activity').describe('The call activity');

export const startCallMonitor = defineTool({
  name: 'start_call_monitor',
  title: 'Start call monitoring',
  description:
    "Dials a supervisor's phone into a live forwarded call: listen (muted), whisper (heard by the owner only) or barge. Name the call by `call_sid` or `activity_id`.",
  input: z.strictObject({
    call_sid: callSidField.optional(),
    activity_id: activityIdField.optional(),
    mode: z.enum(MONITOR_MODES).describe('listen, whisper or barge'),
    supervisor_phone: z
      .string()
      .trim()
      .regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number such as +15551230000')
      .describe("Supervisor's phone, E.164"),
  }),
  output: z.object({ monitor: monitorSchema }),
  access: monitorAccess,
  errors: [
    {
      code: 'call_not_monitorable',
      when: 'The call is over, or not in a conference, or has no owner leg to whisper to',
    },
    { code: 'telephony_not_configured', when: 'The organization has no telephony account' },
    { code: 'telephony_unavailable', when: 'The provider could not be reached or refused' },
  ],
  reachesWithoutSending: REACHES,
  annotations: { openWorldHint: true },
  toolset: 'telephony',
  outside: (input, ctx) => addMonitor(input, ctx),
  async handler(input, ctx) {
    return {
      monitor: await recordMonitor(ctx.db, ctx.auth.orgId, ctx.auth.userId, ctx.outside, input, ctx.now),
    };
  },
});

export const stopCallMonitor = defineTool({
  name: 'stop_call_monitor',
  title: 'Stop call monitoring',
  description: "Removes a supervisor's leg (`participant_call_sid` from start) from the call.",
  input: z.strictObject({
    activity_id: activityIdField.optional(),
    call_sid: callSidField.optional(),
    participant_call_sid: z.string().trim().min(1).max(64).describe("The supervisor's participant call SID"),
  }),
  output: messageOutput,
  access: monitorAccess,
  errors: [
    {
      code: 'not_found',
      when: 'No live monitor of the organization has that participant (or the provider has it no more)',
    },
    { code: 'telephony_not_configured', when: 'The organization has no telephony account' },
    { code: 'telephony_unavailable', when: 'The provider could not be reached or refused' },
  ],
  reachesWithoutSending: "hangs up the supervisor's own leg through the telephony provider; nothing is sent",
  annotations: { openWorldHint: true, idempotentHint: false },
  toolset: 'telephony',
  outside: (input, ctx) => removeMonitor(input, ctx),
  async handler(_input, ctx) {
    await endMonitor(ctx.db, ctx.auth.orgId, ctx.outside.monitorId, ctx.auth.userId, ctx.now);
    return { message: 'Call monitoring stopped' };
  },
});

export const callTools = [listCalls, getCall, startCallMonitor, stopCallMonitor];
