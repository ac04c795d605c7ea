// Conversation memory: what assistants keep about the conversations with a lead — a running
// summary and the commitments made ("send the proposal by Friday"), each open, kept or missed,
// addressed by their position (`index`). This file declares the tools; the data functions
// (one row per lead, edits under the lead's row lock) are store.ts.
import { z } from 'zod';
import { objectId } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { appendCommitment, getLeadMemory, memorySchema, replaceSummary, resolveCommitment } from './store.ts';

const MAX_SUMMARY = 20_000;
const MAX_COMMITMENT_TEXT = 2000;
const MAX_NOTE = 2000;
/** A non-negative integer written the one canonical way: no sign, no leading zero, no fraction. */
const CANONICAL_INDEX = /^(0|[1-9][0-9]*)$/;

const memoryOutput = z.object({ conversation_memory: memorySchema });

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
    'Returns what is remembered of the conversations with a lead: a running summary and the commitments made. Read it before contacting the lead.',
  input: z.strictObject(leadIdShape),
  output: memoryOutput,
  access: readAccess,
  async handler(input, { db, auth }) {
    return { conversation_memory: await getLeadMemory(db, auth.orgId, input.id) };
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
    return { conversation_memory: await replaceSummary(ctx, input.id, input.summary) };
  },
});

export const addCommitment = defineTool({
  name: 'add_commitment',
  title: 'Record a commitment',
  description:
    'Records a commitment made to a lead ("send pricing by Friday"), optionally due at a time; later mark it kept or missed.',
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
    return { conversation_memory: await appendCommitment(ctx, input.id, input) };
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
    "Marks a lead's commitment (by `index`) as missed, with an optional note on what happened. Missed commitments lower the lead health.",
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
