// Conversation memory: what assistants keep about the conversations with a lead — a running
// summary and the commitments made ("send the proposal by Friday"), each open, kept or missed.
// One row per lead, created on the first write; a lead without one reads as an empty memory.
// Commitments are addressed by their position (`index`), so edits lock the lead row first:
// concurrent edits then run one after the other and none is lost.
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { validationError } from '../../core/errors.ts';
import { objectId } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool, type ToolContext } from '../../core/tool.ts';
import { getLiveLead } from '../leads/tools.ts';
import { type Commitment, conversationMemories } from './tables.ts';

export const MAX_COMMITMENTS = 200;
const MAX_SUMMARY = 20_000;
const MAX_COMMITMENT_TEXT = 2000;
const MAX_NOTE = 2000;
/** A non-negative integer written the one canonical way: no sign, no leading zero, no fraction. */
const CANONICAL_INDEX = /^(0|[1-9][0-9]*)$/;

// ---------------------------------------------------------------------------------------------
// Record shape

const COMMITMENT_STATUSES = ['open', 'kept', 'missed'] as const;

const commitmentSchema = z
  .object({
    index: z
      .number()
      .int()
      .describe(
        'Position of the commitment in the list (0-based); pass it to mark_commitment_kept or _missed',
      ),
    text: z.string().describe('What was promised'),
    due_at: z.string().nullable().describe('When it is due (ISO 8601), or null'),
    status: z.enum(COMMITMENT_STATUSES).describe('open, kept or missed'),
    note: z.string().nullable().describe('A note given when it was marked kept or missed, or null'),
    created_at: z.string().describe('When it was recorded (ISO 8601)'),
    created_by: z.string().nullable().describe('Id of the user who recorded it'),
    resolved_at: z
      .string()
      .nullable()
      .describe('When it was first marked kept or missed (ISO 8601); null while open'),
  })
  .describe('A commitment made in a conversation with the lead');

const memorySchema = z
  .object({
    lead_id: z.string().describe('Id of the lead'),
    summary: z
      .string()
      .nullable()
      .describe('Running summary of the conversations, or null when none was written'),
    commitments: z.array(commitmentSchema).describe('Every commitment, oldest first (index order)'),
    updated_at: z.string().nullable().describe('Last change (ISO 8601); null when nothing was ever recorded'),
  })
  .describe("The lead's conversation memory");
type MemoryRecord = z.output<typeof memorySchema>;

const memoryOutput = z.object({ conversation_memory: memorySchema });

interface MemoryState {
  summary: string | null;
  commitments: Commitment[];
  updatedAt: Date | null;
}

function serializeMemory(leadId: string, state: MemoryState): MemoryRecord {
  return {
    lead_id: leadId,
    summary: state.summary,
    commitments: state.commitments.map((c, index) => ({
      index,
      text: c.text,
      due_at: c.due_at,
      status: c.status,
      note: c.note,
      created_at: c.created_at,
      created_by: c.created_by,
      resolved_at: c.resolved_at,
    })),
    updated_at: state.updatedAt ? state.updatedAt.toISOString() : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Data functions

type MemoryCtx = Pick<ToolContext, 'db' | 'auth' | 'now'>;

/** The stored memory of a lead, or an empty one when the lead has none yet. */
export async function readMemory(db: Executor, orgId: string, leadId: string): Promise<MemoryState> {
  const [row] = await db
    .select()
    .from(conversationMemories)
    .where(and(eq(conversationMemories.leadId, leadId), eq(conversationMemories.orgId, orgId)))
    .limit(1);
  if (!row) return { summary: null, commitments: [], updatedAt: null };
  return { summary: row.summary, commitments: row.commitments, updatedAt: row.updatedAt };
}

/** Inserts or overwrites the lead's memory row (the caller holds the lead's row lock). */
async function saveMemory(
  ctx: MemoryCtx,
  leadId: string,
  summary: string | null,
  commitments: Commitment[],
): Promise<MemoryRecord> {
  const [row] = await ctx.db
    .insert(conversationMemories)
    .values({
      leadId,
      orgId: ctx.auth.orgId,
      summary,
      commitments,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .onConflictDoUpdate({
      target: conversationMemories.leadId,
      set: { summary, commitments, updatedAt: ctx.now },
    })
    .returning();
  if (!row) throw new Error('upsert returned no conversation memory');
  return serializeMemory(leadId, row);
}

/** Locks the live lead (404 otherwise) and reads its memory: the start of every edit. */
async function lockMemory(ctx: MemoryCtx, leadId: string): Promise<MemoryState> {
  await getLiveLead(ctx.db, ctx.auth.orgId, leadId, true);
  return readMemory(ctx.db, ctx.auth.orgId, leadId);
}

/** The commitment position from the path, or a 400 naming the valid range. */
function commitmentAt(commitments: readonly Commitment[], index: string): number {
  const position = Number(index);
  if (position < commitments.length) return position;
  const range =
    commitments.length === 0
      ? 'this lead has no commitments yet'
      : `valid indexes are 0 to ${commitments.length - 1}`;
  throw validationError(
    [{ field: 'index', message: `no commitment at index ${index}: ${range}`, code: 'out_of_range' }],
    'Commitment index out of range',
  );
}

/**
 * Marks a commitment kept or missed. Marking it again with the same status keeps the first
 * resolved_at (the moment it was decided) and only replaces the note when one is sent; a different
 * status corrects the earlier mark and stamps a new resolved_at.
 */
async function resolveCommitment(
  ctx: MemoryCtx,
  input: { id: string; index: string; note?: string | undefined },
  status: 'kept' | 'missed',
): Promise<MemoryRecord> {
  const memory = await lockMemory(ctx, input.id);
  const position = commitmentAt(memory.commitments, input.index);
  const commitments = memory.commitments.map((c, i) => {
    if (i !== position) return c;
    const same = c.status === status;
    return {
      ...c,
      status,
      note: input.note ?? (same ? c.note : null),
      resolved_at: same && c.resolved_at ? c.resolved_at : ctx.now.toISOString(),
    };
  });
  return saveMemory(ctx, input.id, memory.summary, commitments);
}

/** Commitments that count against the lead: marked missed, or still open after their due time. */
export function countMissedCommitments(commitments: readonly Commitment[], now: Date): number {
  return commitments.filter(
    (c) => c.status === 'missed' || (c.status === 'open' && c.due_at !== null && new Date(c.due_at) < now),
  ).length;
}

// ---------------------------------------------------------------------------------------------
// Tools

const leadIdShape = { id: objectId('lead') };
const indexField = z
  .string()
  .regex(CANONICAL_INDEX, 'must be a non-negative whole number without sign, leading zeros or decimals')
  .describe('Position of the commitment (0-based, as listed by get_conversation_memory), e.g. "0"');
const noteField = z
  .string()
  .max(MAX_NOTE)
  .refine(NO_NUL, nulMessage)
  .optional()
  .describe(`Optional note on the outcome, at most ${MAX_NOTE} characters`);

const readAccess = { kind: 'read', resource: 'leads', permission: 'leads.view' } as const;
const writeAccess = { kind: 'write', resource: 'leads', permission: 'leads.edit' } as const;

export const getConversationMemory = defineTool({
  name: 'get_conversation_memory',
  title: "Get a lead's conversation memory",
  description:
    'Returns what is remembered of the conversations with a lead: the running `summary` and the `commitments` made (text, ' +
    'due time, status open/kept/missed, each with its `index`). Read it before contacting a lead to pick up where the last ' +
    'conversation ended. A lead with nothing recorded returns an empty memory.',
  input: z.strictObject(leadIdShape),
  output: memoryOutput,
  access: readAccess,
  async handler(input, { db, auth }) {
    await getLiveLead(db, auth.orgId, input.id);
    return { conversation_memory: serializeMemory(input.id, await readMemory(db, auth.orgId, input.id)) };
  },
});

export const updateConversationSummary = defineTool({
  name: 'update_conversation_summary',
  title: "Replace a lead's conversation summary",
  description:
    'Replaces the running summary of the conversations with a lead (null clears it); the commitments are unchanged. Send the ' +
    'whole new summary, not a diff: read it first with get_conversation_memory. Returns the memory.',
  input: z.strictObject({
    ...leadIdShape,
    summary: z
      .string()
      .max(MAX_SUMMARY)
      .refine(NO_NUL, nulMessage)
      .nullable()
      .describe(`The new summary, at most ${MAX_SUMMARY} characters; null clears it`),
  }),
  output: memoryOutput,
  access: writeAccess,
  annotations: { idempotentHint: true },
  toolset: 'sales',
  async handler(input, ctx) {
    const memory = await lockMemory(ctx, input.id);
    return { conversation_memory: await saveMemory(ctx, input.id, input.summary, memory.commitments) };
  },
});

export const addCommitment = defineTool({
  name: 'add_commitment',
  title: 'Record a commitment',
  description:
    'Records a commitment made in a conversation with a lead ("send the pricing by Friday"), with an optional due time, as ' +
    `open. It is appended, so its index is the last one. At most ${MAX_COMMITMENTS} commitments per lead. Returns the memory. ` +
    'Later mark it with mark_commitment_kept or mark_commitment_missed; missed or overdue commitments lower the lead health.',
  input: z.strictObject({
    ...leadIdShape,
    text: z
      .string()
      .trim()
      .min(1)
      .max(MAX_COMMITMENT_TEXT)
      .refine(NO_NUL, nulMessage)
      .describe(`What was promised, 1-${MAX_COMMITMENT_TEXT} characters`),
    due_at: z.iso
      .datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-05-01T09:00:00Z' })
      .optional()
      .describe('When it is due (ISO 8601 date-time); omit when no date was given'),
  }),
  output: memoryOutput,
  access: writeAccess,
  async handler(input, ctx) {
    const memory = await lockMemory(ctx, input.id);
    if (memory.commitments.length >= MAX_COMMITMENTS) {
      throw validationError([
        {
          field: 'text',
          message: `a lead holds at most ${MAX_COMMITMENTS} commitments`,
          code: 'too_many_commitments',
        },
      ]);
    }
    const commitment: Commitment = {
      text: input.text,
      due_at: input.due_at ? new Date(input.due_at).toISOString() : null,
      status: 'open',
      note: null,
      created_at: ctx.now.toISOString(),
      created_by: ctx.auth.userId,
      resolved_at: null,
    };
    const commitments = [...memory.commitments, commitment];
    return { conversation_memory: await saveMemory(ctx, input.id, memory.summary, commitments) };
  },
});

const resolveInput = z.strictObject({ ...leadIdShape, index: indexField, note: noteField });

export const markCommitmentKept = defineTool({
  name: 'mark_commitment_kept',
  title: 'Mark a commitment kept',
  description:
    'Marks the commitment at `index` of a lead as kept, with an optional `note`. Marking it kept again keeps the first ' +
    'resolved_at. An index that is not a whole number or is out of range answers 400 with the valid range. Returns the memory.',
  input: resolveInput,
  output: memoryOutput,
  access: writeAccess,
  annotations: { idempotentHint: true },
  toolset: 'sales',
  async handler(input, ctx) {
    return { conversation_memory: await resolveCommitment(ctx, input, 'kept') };
  },
});

export const markCommitmentMissed = defineTool({
  name: 'mark_commitment_missed',
  title: 'Mark a commitment missed',
  description:
    'Marks the commitment at `index` of a lead as missed, with an optional `note` (what happened, what was agreed instead). ' +
    'Marking it missed again keeps the first resolved_at. An index that is not a whole number or is out of range answers 400 ' +
    'with the valid range. Missed commitments lower the lead health. Returns the memory.',
  input: resolveInput,
  output: memoryOutput,
  access: writeAccess,
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    return { conversation_memory: await resolveCommitment(ctx, input, 'missed') };
  },
});

export const conversationMemoryTools = [
  getConversationMemory,
  addCommitment,
  markCommitmentMissed,
  updateConversationSummary,
  markCommitmentKept,
];
