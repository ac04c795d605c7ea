// The conversation memory store: the memory's record shape and its one row per lead (created on
// the first write; a lead without one reads as an empty memory). Commitments are addressed by
// their position, so every edit locks the lead row first: concurrent edits then run one after
// the other and none is lost.
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { validationError } from '../../core/errors.ts';
import type { ToolContext } from '../../core/tool.ts';
import { getLiveLead } from '../leads/store.ts';
import { type Commitment, conversationMemories } from './tables.ts';

const MAX_COMMITMENTS = 200;

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

export const memorySchema = z
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
export type MemoryRecord = z.output<typeof memorySchema>;

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
export async function resolveCommitment(
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

/** The memory of a live lead (404 otherwise), empty when nothing was recorded. */
export async function getLeadMemory(db: Executor, orgId: string, leadId: string): Promise<MemoryRecord> {
  await getLiveLead(db, orgId, leadId);
  return serializeMemory(leadId, await readMemory(db, orgId, leadId));
}

/** Replaces the summary (null clears it); the commitments are unchanged. */
export async function replaceSummary(
  ctx: MemoryCtx,
  leadId: string,
  summary: string | null,
): Promise<MemoryRecord> {
  const memory = await lockMemory(ctx, leadId);
  return saveMemory(ctx, leadId, summary, memory.commitments);
}

/** Appends an open commitment, at most MAX_COMMITMENTS per lead. */
export async function appendCommitment(
  ctx: MemoryCtx,
  leadId: string,
  input: { text: string; due_at?: string | undefined },
): Promise<MemoryRecord> {
  const memory = await lockMemory(ctx, leadId);
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
  return saveMemory(ctx, leadId, memory.summary, commitments);
}
