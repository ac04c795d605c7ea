// Call tools: read the organization's calls (list, get). Calls are written by the provider's hooks
// only (hooks.ts); nothing here changes them.
import { z } from 'zod';
import { objectId, pagedOutput } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
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
  description: 'Returns one phone call.',
  input: z.strictObject({ id: objectId('call') }),
  output: z.object({ call: callSchema }),
  access,
  annotations: closed,
  toolset: 'telephony',
  async handler(input, { db, auth }) {
    return { call: await getCallRecord(db, auth.orgId, input.id) };
  },
});

export const callTools = [listCalls, getCall];
