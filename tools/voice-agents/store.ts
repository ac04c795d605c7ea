// The voice agents store: the record shape, the status machine (active <-> paused), creating and
// changing an agent, the list (status filter, name search) and the trash entry, on the record helper
// (core/records.ts). No events: the specification's catalogue names none for voice agents.
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  type ListParams,
  newRecordStamp,
  type PagedList,
  type RecordContext,
  type SortColumn,
  sentFields,
} from '../../core/records.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import type { TrashType } from '../../core/trash.ts';
import { type VoiceAgentRow, voiceAgents } from './tables.ts';

/** An agent answers calls while active; paused, its numbers fall back to their forward_to. */
export const voiceAgentMachine = defineStateMachine({
  resource: 'voice agent',
  field: 'status',
  states: ['active', 'paused'],
  initial: 'active',
  moves: {
    active: { paused: null },
    paused: { active: null },
  },
});
export type VoiceAgentStatus = (typeof voiceAgentMachine.states)[number];

export const voiceAgentSchema = z
  .object({
    _id: z.string().describe('Voice agent id (24 hex characters)'),
    name: z.string().describe('Name of the voice agent'),
    instructions: z.string().describe('What the agent is told to do and how to behave on a call'),
    greeting: z.string().describe('What the agent says first when it answers'),
    voice: z.string().describe('The voice it speaks with (e.g. Polly.Joanna or a provider voice id)'),
    language: z.string().describe('Language it speaks (BCP 47 tag, e.g. en-US)'),
    use_knowledge_base: z
      .boolean()
      .describe("Whether it grounds its answers in the organization's AI-context knowledge-base articles"),
    status: voiceAgentMachine.schema.describe('active (answers calls) or paused (answers none)'),
    ...auditFields('voice agent'),
  })
  .describe('A voice agent');
export type VoiceAgentRecord = z.output<typeof voiceAgentSchema>;

export function serializeVoiceAgent(row: VoiceAgentRow): VoiceAgentRecord {
  return {
    _id: row.id,
    name: row.name,
    instructions: row.instructions,
    greeting: row.greeting,
    voice: row.voice,
    language: row.language,
    use_knowledge_base: row.useKnowledgeBase,
    status: voiceAgentMachine.parse(row.status),
    ...auditValues(row),
  };
}

/** The voice_agents table on the record helper: lookups, lists, trash and restore. */
export const voiceAgentRecords = defineRecordTable<VoiceAgentRow>({
  label: 'Voice agent',
  table: voiceAgents,
  select: (db) => db.select().from(voiceAgents).$dynamic(),
  update: (db, set, where) => db.update(voiceAgents).set(set).where(where).returning(),
});

export interface VoiceAgentFields {
  name?: string | undefined;
  instructions?: string | undefined;
  greeting?: string | undefined;
  voice?: string | undefined;
  language?: string | undefined;
  useKnowledgeBase?: boolean | undefined;
  status?: VoiceAgentStatus | undefined;
}

export type NewVoiceAgent = VoiceAgentFields & {
  name: string;
  instructions: string;
  greeting: string;
  voice: string;
  language: string;
};

/** Creates a voice agent (active unless `status` says paused, as a move from active). */
export async function insertVoiceAgent(ctx: RecordContext, input: NewVoiceAgent): Promise<VoiceAgentRecord> {
  const status = input.status ?? voiceAgentMachine.initial;
  voiceAgentMachine.assertMove(voiceAgentMachine.initial, status);
  const [row] = await ctx.db
    .insert(voiceAgents)
    .values({
      ...newRecordStamp(ctx),
      name: input.name,
      instructions: input.instructions,
      greeting: input.greeting,
      voice: input.voice,
      language: input.language,
      useKnowledgeBase: input.useKnowledgeBase ?? false,
      status,
    })
    .returning();
  if (!row) throw new Error('insert returned no voice agent');
  return serializeVoiceAgent(row);
}

/** Changes the fields sent of a live voice agent (a 404 otherwise); a status change is a move of the machine. */
export async function writeVoiceAgent(
  ctx: RecordContext,
  id: string,
  changes: VoiceAgentFields,
): Promise<VoiceAgentRecord> {
  const before = await voiceAgentRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const from = voiceAgentMachine.parse(before.status);
  const to = changes.status ?? from;
  voiceAgentMachine.assertMove(from, to);
  const { status: _status, ...fields } = changes;
  const row = await voiceAgentRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    ...sentFields(fields),
    status: to,
    updatedAt: ctx.now,
  });
  return serializeVoiceAgent(row);
}

export const VOICE_AGENT_SORT_FIELDS = ['name', 'created_at'] as const;

const SORT_COLUMNS: Record<(typeof VOICE_AGENT_SORT_FIELDS)[number], SortColumn> = {
  name: voiceAgents.name,
  created_at: voiceAgents.createdAt,
};

/** The organization's live voice agents, newest first; `status` filters, `search` matches words in the name. */
export function listVoiceAgentsPage(
  db: Executor,
  orgId: string,
  params: ListParams & { status?: VoiceAgentStatus | undefined },
): Promise<PagedList<'voice_agents', VoiceAgentRecord>> {
  const conditions = voiceAgentRecords.liveConditions(orgId);
  if (params.status !== undefined) conditions.push(eq(voiceAgents.status, params.status));
  return voiceAgentRecords.list(db, 'voice_agents', serializeVoiceAgent, params, {
    conditions,
    sortColumns: SORT_COLUMNS,
    match: (search) => ({ where: sql`${voiceAgents.name} ilike ${`%${escapeLike(search)}%`}` }),
  });
}

async function restoreVoiceAgent(ctx: RecordContext, id: string): Promise<VoiceAgentRecord> {
  const { row } = await voiceAgentRecords.restore(ctx, id);
  return serializeVoiceAgent(row);
}

/** The voice agent entry of the trash registry; its name is its name there. */
export const voiceAgentTrashTypes: readonly TrashType[] = [
  voiceAgentRecords.trashType({
    type: 'voice_agent',
    recordKey: 'voice_agent',
    resource: 'telephony',
    schema: voiceAgentSchema,
    name: voiceAgents.name,
    restore: restoreVoiceAgent,
  }),
];
