// Voice session tools: read the calls voice agents answered (list, get), with their transcripts.
// Sessions are written by the relay (relay.ts) only; nothing here changes them.
import { z } from 'zod';
import { objectId, pagedOutput } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import { getVoiceSessionRecord, listVoiceSessionsPage, voiceSessionSchema } from './store.ts';

const access = { kind: 'read', resource: 'telephony', permission: 'voice_sessions.view' } as const;
const closed = { openWorldHint: false } as const;

export const listVoiceSessions = defineTool({
  name: 'list_voice_sessions',
  title: 'List voice sessions',
  description:
    'Lists calls voice agents answered, newest first, with transcripts; filters `call_sid`, `agent_id`.',
  input: z.strictObject({
    page: z.coerce.number().int().min(1).default(1).describe('Page number, 1-based'),
    limit: z.coerce.number().int().min(1).max(100).default(25).describe('Items per page'),
    call_sid: z.string().trim().min(1).max(100).optional().describe('Only this call'),
    agent_id: objectId('voice agent').optional().describe('Only this voice agent'),
  }),
  output: pagedOutput('voice_sessions', voiceSessionSchema),
  access,
  annotations: closed,
  toolset: 'telephony',
  handler: (input, { db, auth }) => listVoiceSessionsPage(db, auth.orgId, input),
});

export const getVoiceSession = defineTool({
  name: 'get_voice_session',
  title: 'Get a voice session',
  description: 'Returns one voice agent call session by id, with its transcript.',
  input: z.strictObject({ id: objectId('voice session') }),
  output: z.object({ voice_session: voiceSessionSchema }),
  access,
  annotations: closed,
  toolset: 'telephony',
  async handler(input, { db, auth }) {
    return { voice_session: await getVoiceSessionRecord(db, auth.orgId, input.id) };
  },
});

export const voiceRelayTools = [listVoiceSessions, getVoiceSession];
