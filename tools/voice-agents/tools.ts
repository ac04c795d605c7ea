// Voice agent tools: list, get, create, update and delete (to the trash). This file declares the
// tools; the data functions are store.ts, the rules docs/areas/voice-agents.md. Nothing here calls
// the telephony provider: an agent is a record the call hooks read.
import { z } from 'zod';
import { languageTagField } from '../../core/language-tag.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import {
  insertVoiceAgent,
  listVoiceAgentsPage,
  serializeVoiceAgent,
  VOICE_AGENT_SORT_FIELDS,
  voiceAgentMachine,
  voiceAgentRecords,
  voiceAgentSchema,
  writeVoiceAgent,
} from './store.ts';

const MAX_NAME = 200;
const MAX_INSTRUCTIONS = 20_000;
const MAX_GREETING = 1000;
const MAX_VOICE = 100;
const MAX_LANGUAGE = 35;

const text = (max: number, what: string) =>
  z.string().trim().min(1).max(max).refine(NO_NUL, nulMessage).describe(`${what} (1-${max} chars)`);

const nameField = text(MAX_NAME, 'Name');
const instructionsField = text(MAX_INSTRUCTIONS, 'Instructions');
const greetingField = text(MAX_GREETING, 'Opening line');
const voiceField = text(MAX_VOICE, 'Voice id, e.g. Polly.Joanna');
const languageField = languageTagField(MAX_LANGUAGE).describe(
  `BCP 47 language, e.g. en-US (<= ${MAX_LANGUAGE} chars)`,
);
const useKnowledgeBaseField = z.boolean().describe('Use AI-context KB articles (default false)');
const statusField = voiceAgentMachine.schema.describe('active or paused (answers no call)');

const idShape = { id: objectId('voice agent') };
const output = z.object({ voice_agent: voiceAgentSchema });

const access = (
  kind: 'read' | 'write',
  permission: 'voice_agents.view' | 'voice_agents.create' | 'voice_agents.edit' | 'voice_agents.delete',
) => ({ kind, resource: 'telephony', permission }) as const;

// Records of this server only: nothing reaches the provider, so none of these is open-world.
const closed = { openWorldHint: false } as const;

export const listVoiceAgents = defineTool({
  name: 'list_voice_agents',
  title: 'List voice agents',
  description: 'Lists voice agents, newest first; filters `status`, `search` (name).',
  input: z.strictObject({
    ...listParams(VOICE_AGENT_SORT_FIELDS),
    status: voiceAgentMachine.schema.optional().describe('Only this status'),
  }),
  output: pagedOutput('voice_agents', voiceAgentSchema),
  access: access('read', 'voice_agents.view'),
  annotations: closed,
  toolset: 'telephony',
  handler: (input, { db, auth }) => listVoiceAgentsPage(db, auth.orgId, input),
});

export const getVoiceAgent = defineTool({
  name: 'get_voice_agent',
  title: 'Get a voice agent',
  description: 'Returns one voice agent by id (find ids with list_voice_agents); trashed ones answer 404.',
  input: z.strictObject(idShape),
  output,
  access: access('read', 'voice_agents.view'),
  annotations: closed,
  toolset: 'telephony',
  async handler(input, { db, auth }) {
    return { voice_agent: serializeVoiceAgent(await voiceAgentRecords.getLive(db, auth.orgId, input.id)) };
  },
});

export const createVoiceAgent = defineTool({
  name: 'create_voice_agent',
  title: 'Create a voice agent',
  description:
    'Creates a voice agent (active unless `status` is paused); a phone number names it to answer its calls.',
  input: z.strictObject({
    name: nameField,
    instructions: instructionsField,
    greeting: greetingField,
    voice: voiceField,
    language: languageField,
    use_knowledge_base: useKnowledgeBaseField.optional(),
    status: statusField.optional(),
  }),
  output,
  access: access('write', 'voice_agents.create'),
  annotations: closed,
  toolset: 'telephony',
  async handler(input, ctx) {
    return {
      voice_agent: await insertVoiceAgent(ctx, {
        name: input.name,
        instructions: input.instructions,
        greeting: input.greeting,
        voice: input.voice,
        language: input.language,
        useKnowledgeBase: input.use_knowledge_base,
        status: input.status,
      }),
    };
  },
});

export const updateVoiceAgent = defineTool({
  name: 'update_voice_agent',
  title: 'Update a voice agent',
  description:
    'Changes the fields sent of a voice agent; while paused, its numbers forward their calls instead.',
  input: z.strictObject({
    ...idShape,
    name: nameField.optional(),
    instructions: instructionsField.optional(),
    greeting: greetingField.optional(),
    voice: voiceField.optional(),
    language: languageField.optional(),
    use_knowledge_base: useKnowledgeBaseField.optional(),
    status: statusField.optional(),
  }),
  output,
  access: access('write', 'voice_agents.edit'),
  annotations: { idempotentHint: true, ...closed },
  toolset: 'telephony',
  async handler(input, ctx) {
    return {
      voice_agent: await writeVoiceAgent(ctx, input.id, {
        name: input.name,
        instructions: input.instructions,
        greeting: input.greeting,
        voice: input.voice,
        language: input.language,
        useKnowledgeBase: input.use_knowledge_base,
        status: input.status,
      }),
    };
  },
});

export const deleteVoiceAgent = defineTool({
  name: 'delete_voice_agent',
  title: 'Delete a voice agent',
  description:
    'Moves a voice agent to the trash (restore_trash_item brings it back); its numbers forward their calls.',
  input: z.strictObject(idShape),
  output: messageOutput,
  access: access('write', 'voice_agents.delete'),
  annotations: { destructiveHint: true, idempotentHint: true, ...closed },
  toolset: 'telephony',
  async handler(input, ctx) {
    await voiceAgentRecords.trash(ctx, input.id);
    return { message: 'Voice agent moved to the trash' };
  },
});

export const voiceAgentTools = [
  listVoiceAgents,
  getVoiceAgent,
  createVoiceAgent,
  updateVoiceAgent,
  deleteVoiceAgent,
];
