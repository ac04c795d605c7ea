// Opportunities: deals on a lead, with a value in a currency, a confidence, a status and an owner.
// Every change emits opportunity.updated; a move of the status to won or lost also emits
// opportunity.won / opportunity.lost, which is what revenue integrations listen for (the moves and
// their events are the state machine below; a closed deal is reopened before it closes the other
// way). An
// opportunity follows its lead into the trash and back (core/trash.ts ChildTable, declared in tools/opportunities/index.ts).
import { and, asc, count, desc, eq, gte, inArray, isNotNull, isNull, lte, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { type ErrorDetail, notFound, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import { isAssignableUser } from '../../core/records.ts';
import {
  iso,
  listParams,
  messageOutput,
  objectId,
  offsetOf,
  paged,
  pagedOutput,
} from '../../core/schemas.ts';
import { defineStateMachine, describeMoves } from '../../core/state-machine.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { prefixTsQuery } from '../../core/text-search.ts';
import { defineTool, type Tool, type ToolContext } from '../../core/tool.ts';
import type { TrashType } from '../../core/trash.ts';
import { contacts } from '../contacts/tables.ts';
import { assertLeadLive, isLiveLead } from '../leads/children.ts';
import { getLiveLead } from '../leads/tools.ts';
import { type OpportunityRow, opportunities } from './tables.ts';

export const OPPORTUNITY_STATUSES = ['active', 'won', 'lost'] as const;
export type OpportunityStatus = (typeof OPPORTUNITY_STATUSES)[number];

/**
 * A deal closes as won or lost and reopens to active. won <-> lost directly is refused: the
 * listeners of opportunity.won / opportunity.lost then always see a close of an open deal, and a
 * reversal always shows as an opportunity.updated whose previous status is won or lost.
 */
export const opportunityStatusMachine = defineStateMachine({
  resource: 'opportunity',
  field: 'status',
  states: OPPORTUNITY_STATUSES,
  initial: 'active',
  moves: {
    active: { won: 'opportunity.won', lost: 'opportunity.lost' },
    won: { active: null },
    lost: { active: null },
  },
});
const MAX_VALUE = 1e15;

// ---------------------------------------------------------------------------------------------
// Record shape

export const opportunitySchema = z
  .object({
    _id: z.string().describe('Opportunity id (24 hex characters)'),
    lead_id: z.string().describe('Id of the lead the deal is with'),
    contact_id: z
      .string()
      .nullable()
      .describe('Id of the contact (a person at the lead) the deal is with, or null'),
    note: z.string().nullable().describe('Free-text note, or null'),
    value: z.number().describe("Deal value in the currency's major unit (12.5 = 12.50), exact to the cent"),
    currency: z.string().describe('ISO 4217 currency code, e.g. USD'),
    confidence: z.number().int().describe('Likelihood of winning, 0-100 percent'),
    status: z.enum(OPPORTUNITY_STATUSES).describe('active, won or lost'),
    pipeline_stage: z.string().nullable().describe('Free-text pipeline stage, e.g. "Proposal sent", or null'),
    expected_close_date: z.string().nullable().describe('Expected close date (YYYY-MM-DD), or null'),
    owner_id: z.string().nullable().describe('Id of the user who owns the deal, or null when unassigned'),
    closed_at: z
      .string()
      .nullable()
      .describe('When the status last moved to won or lost (ISO 8601); null while active'),
    created_by: z.string().nullable().describe('Id of the user who created the opportunity'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('An opportunity (deal) on a lead');
export type OpportunityRecord = z.output<typeof opportunitySchema>;

/** Every column but the generated search vector, which no caller needs to read back. */
const opportunityColumns = {
  id: opportunities.id,
  orgId: opportunities.orgId,
  leadId: opportunities.leadId,
  contactId: opportunities.contactId,
  note: opportunities.note,
  value: opportunities.value,
  currency: opportunities.currency,
  confidence: opportunities.confidence,
  status: opportunities.status,
  pipelineStage: opportunities.pipelineStage,
  expectedCloseDate: opportunities.expectedCloseDate,
  ownerId: opportunities.ownerId,
  closedAt: opportunities.closedAt,
  createdBy: opportunities.createdBy,
  deletedAt: opportunities.deletedAt,
  deletedBy: opportunities.deletedBy,
  createdAt: opportunities.createdAt,
  updatedAt: opportunities.updatedAt,
};
export type OpportunityData = Omit<OpportunityRow, 'search'>;

function toStatus(value: string): OpportunityStatus {
  return OPPORTUNITY_STATUSES.find((s) => s === value) ?? 'active';
}

export function serializeOpportunity(row: OpportunityData): OpportunityRecord {
  return {
    _id: row.id,
    lead_id: row.leadId,
    contact_id: row.contactId,
    note: row.note,
    // numeric comes back as a number in 'number' mode; Number() guards drivers that hand back text.
    value: Number(row.value),
    currency: row.currency,
    confidence: row.confidence,
    status: toStatus(row.status),
    pipeline_stage: row.pipelineStage,
    expected_close_date: row.expectedCloseDate,
    owner_id: row.ownerId,
    closed_at: iso(row.closedAt),
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Input fields

/** True for a YYYY-MM-DD string naming a day that exists (2025-02-30 does not). */
function isRealDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

const dateString = (what: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date in the form YYYY-MM-DD')
    .refine(isRealDate, 'must be a real calendar date')
    .meta({ format: 'date' })
    .describe(`${what} (YYYY-MM-DD)`);

/** At most two decimals: the stored numeric(18,2) would otherwise round silently. */
function hasAtMostTwoDecimals(value: number): boolean {
  return Number(value.toFixed(2)) === value;
}

const leadIdField = objectId('lead').describe('Id of a live lead of this organization (24 hex characters)');
const contactIdField = objectId('contact')
  .nullable()
  .describe('Id of a live contact of the same lead the deal is with; null for none');
const noteField = z
  .string()
  .max(10_000)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('Free-text note about the deal, at most 10000 characters; null clears it');
const valueField = z
  .number()
  .min(0)
  .lt(MAX_VALUE)
  .refine(hasAtMostTwoDecimals, 'must have at most 2 decimals')
  .describe("Deal value in the currency's major unit (e.g. 1250.50), >= 0, at most 2 decimals, below 1e15");
const currencyField = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code: 3 uppercase letters, e.g. USD')
  .describe('ISO 4217 currency code, 3 uppercase letters (e.g. USD, EUR)');
const confidenceField = z
  .number()
  .int()
  .min(0)
  .max(100)
  .describe('Likelihood of winning in percent, integer 0-100');
const statusField = z
  .enum(OPPORTUNITY_STATUSES)
  .describe('active, won or lost; moving to won or lost stamps closed_at, moving back to active clears it');
const stageField = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('Pipeline stage, free text of 1-100 characters (e.g. "Proposal sent"); null clears it');
const closeDateField = dateString('Expected close date')
  .nullable()
  .describe('Expected close date (YYYY-MM-DD, a real calendar date); null clears it');
const ownerField = objectId('owner user')
  .nullable()
  .describe('Id of an active user of the organization who owns the deal; null leaves it unassigned');

const opportunityIdShape = { id: objectId('opportunity') };

const createOpportunityInput = z.strictObject({
  lead_id: leadIdField,
  contact_id: contactIdField.optional(),
  note: noteField.optional(),
  value: valueField.default(0).describe('Deal value (default 0), >= 0, at most 2 decimals'),
  currency: currencyField.default('USD').describe('ISO 4217 currency code (default USD)'),
  confidence: confidenceField.default(0).describe('Likelihood of winning in percent, 0-100 (default 0)'),
  status: statusField.default('active').describe('active (default), won or lost'),
  pipeline_stage: stageField.optional(),
  expected_close_date: closeDateField.optional(),
  owner_id: ownerField.optional().describe('Owner: an active user of the organization (default: the caller)'),
});

const updateOpportunityInput = z.strictObject({
  ...opportunityIdShape,
  lead_id: leadIdField
    .optional()
    .describe('Moves the deal to this live lead; its contact must then be a contact of that lead'),
  contact_id: contactIdField.optional(),
  note: noteField.optional(),
  value: valueField.optional(),
  currency: currencyField.optional(),
  confidence: confidenceField.optional(),
  status: statusField
    .optional()
    .describe(
      `New status; the allowed moves: ${describeMoves(opportunityStatusMachine)}. Another move (won <-> lost) is a ` +
        '400 invalid_transition: reopen the deal first. Moving to won or lost stamps closed_at, back to active clears it',
    ),
  pipeline_stage: stageField.optional(),
  expected_close_date: closeDateField.optional(),
  owner_id: ownerField.optional(),
});

// ---------------------------------------------------------------------------------------------
// Data functions

type OpportunityCtx = Pick<ToolContext, 'db' | 'auth' | 'emit' | 'now'>;

/** The editable state of an opportunity: what an update merges into. */
interface OpportunityState {
  leadId: string;
  contactId: string | null;
  note: string | null;
  value: number;
  currency: string;
  confidence: number;
  status: OpportunityStatus;
  pipelineStage: string | null;
  expectedCloseDate: string | null;
  ownerId: string | null;
}

/** Live opportunity of the organization, or a 404; `lock` takes a row lock for a read-modify-write. */
export async function getLiveOpportunity(
  db: Executor,
  orgId: string,
  id: string,
  lock = false,
): Promise<OpportunityData> {
  const query = db
    .select(opportunityColumns)
    .from(opportunities)
    .where(and(eq(opportunities.id, id), eq(opportunities.orgId, orgId), isNull(opportunities.deletedAt)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Opportunity');
  return row;
}

async function isContactOfLead(
  db: Executor,
  orgId: string,
  contactId: string,
  leadId: string,
): Promise<boolean> {
  const [row] = await db
    .select({ id: contacts.id })
    .from(contacts)
    .where(
      and(
        eq(contacts.id, contactId),
        eq(contacts.orgId, orgId),
        eq(contacts.leadId, leadId),
        isNull(contacts.deletedAt),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * The references in the body: the contact must be a live contact of the deal's lead and the owner
 * an active user. Both are 400s with a field detail, listed together.
 */
async function checkReferences(
  ctx: OpportunityCtx,
  state: OpportunityState,
  checkOwner: boolean,
  checkContact: boolean,
): Promise<void> {
  const details: ErrorDetail[] = [];
  if (checkContact && state.contactId !== null) {
    if (!(await isContactOfLead(ctx.db, ctx.auth.orgId, state.contactId, state.leadId))) {
      details.push({
        field: 'contact_id',
        message: "must be the id of a live contact of the opportunity's lead",
        code: 'invalid_contact',
      });
    }
  }
  if (
    checkOwner &&
    state.ownerId !== null &&
    !(await isAssignableUser(ctx.db, ctx.auth.orgId, state.ownerId))
  ) {
    details.push({
      field: 'owner_id',
      message: 'must be the id of an active user of this organization',
      code: 'invalid_owner',
    });
  }
  if (details.length > 0) throw validationError(details);
}

/**
 * Emits the event of the status move (opportunity.won / opportunity.lost), if it has one. A deal
 * created in another state than active made that move from active (`previousStatus` null).
 */
async function emitStatusMove(
  ctx: OpportunityCtx,
  record: OpportunityRecord,
  previousStatus: OpportunityStatus | null,
): Promise<void> {
  const from = previousStatus ?? opportunityStatusMachine.initial;
  const event = opportunityStatusMachine.eventOf(from, record.status);
  if (event !== null) await ctx.emit(event, { ...record, previous_status: previousStatus });
}

async function insertOpportunity(
  ctx: OpportunityCtx,
  input: z.output<typeof createOpportunityInput>,
): Promise<OpportunityRecord> {
  // An unknown, trashed or other-organization lead is a 404 "Lead not found", as for every child record.
  await getLiveLead(ctx.db, ctx.auth.orgId, input.lead_id);
  const state: OpportunityState = {
    leadId: input.lead_id,
    contactId: input.contact_id ?? null,
    note: input.note ?? null,
    value: input.value,
    currency: input.currency,
    confidence: input.confidence,
    status: input.status,
    pipelineStage: input.pipeline_stage ?? null,
    expectedCloseDate: input.expected_close_date ?? null,
    ownerId: input.owner_id === undefined ? ctx.auth.userId : input.owner_id,
  };
  await checkReferences(ctx, state, state.ownerId !== ctx.auth.userId, true);
  const [row] = await ctx.db
    .insert(opportunities)
    .values({
      id: newId(ctx.now),
      orgId: ctx.auth.orgId,
      ...state,
      closedAt: state.status === 'active' ? null : ctx.now,
      createdBy: ctx.auth.userId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning(opportunityColumns);
  if (!row) throw new Error('insert returned no opportunity');
  const record = serializeOpportunity(row);
  await ctx.emit('opportunity.created', record);
  // Created already won or lost (e.g. logging a closed deal) is still a close the listeners must hear of.
  await emitStatusMove(ctx, record, null);
  return record;
}

type PartialOpportunityInput = Omit<z.output<typeof updateOpportunityInput>, 'id'>;

function mergeState(before: OpportunityData, input: PartialOpportunityInput): OpportunityState {
  const pick = <T>(sent: T | undefined, current: T): T => (sent === undefined ? current : sent);
  return {
    leadId: pick(input.lead_id, before.leadId),
    contactId: pick(input.contact_id, before.contactId),
    note: pick(input.note, before.note),
    value: pick(input.value, Number(before.value)),
    currency: pick(input.currency, before.currency),
    confidence: pick(input.confidence, before.confidence),
    status: pick(input.status, toStatus(before.status)),
    pipelineStage: pick(input.pipeline_stage, before.pipelineStage),
    expectedCloseDate: pick(input.expected_close_date, before.expectedCloseDate),
    ownerId: pick(input.owner_id, before.ownerId),
  };
}

/** Public names of the fields that differ, with their previous values. */
function diffOpportunity(
  before: OpportunityData,
  next: OpportunityState,
): { changed: string[]; previous: Record<string, unknown> } {
  const changed: string[] = [];
  const previous: Record<string, unknown> = {};
  const pairs: [string, unknown, unknown][] = [
    ['lead_id', before.leadId, next.leadId],
    ['contact_id', before.contactId, next.contactId],
    ['note', before.note, next.note],
    ['value', Number(before.value), next.value],
    ['currency', before.currency, next.currency],
    ['confidence', before.confidence, next.confidence],
    ['status', before.status, next.status],
    ['pipeline_stage', before.pipelineStage, next.pipelineStage],
    ['expected_close_date', before.expectedCloseDate, next.expectedCloseDate],
    ['owner_id', before.ownerId, next.ownerId],
  ];
  for (const [field, old, now] of pairs) {
    if (old !== now) {
      changed.push(field);
      previous[field] = old;
    }
  }
  return { changed, previous };
}

/** closed_at after a status change: stamped on a move to won/lost, cleared on a move back to active. */
function closedAtAfter(before: OpportunityData, status: OpportunityStatus, now: Date): Date | null {
  if (status === 'active') return null;
  return status === before.status ? before.closedAt : now;
}

async function patchOpportunity(
  ctx: OpportunityCtx,
  id: string,
  input: PartialOpportunityInput,
): Promise<OpportunityRecord> {
  const before = await getLiveOpportunity(ctx.db, ctx.auth.orgId, id, true);
  const next = mergeState(before, input);
  opportunityStatusMachine.assertMove(toStatus(before.status), next.status);
  const leadMoved = next.leadId !== before.leadId;
  if (leadMoved && !(await isLiveLead(ctx.db, ctx.auth.orgId, next.leadId))) {
    throw validationError([
      {
        field: 'lead_id',
        message: 'must be the id of a live lead of this organization',
        code: 'invalid_lead',
      },
    ]);
  }
  // The contact is checked when it is sent or when the deal moves to another lead (it must follow).
  await checkReferences(
    ctx,
    next,
    next.ownerId !== before.ownerId,
    input.contact_id !== undefined || leadMoved,
  );
  const { changed, previous } = diffOpportunity(before, next);
  if (changed.length === 0) return serializeOpportunity(before);
  const closedAt = closedAtAfter(before, next.status, ctx.now);
  if (iso(closedAt) !== iso(before.closedAt)) {
    changed.push('closed_at');
    previous.closed_at = iso(before.closedAt);
  }
  const [row] = await ctx.db
    .update(opportunities)
    .set({ ...next, closedAt, updatedAt: ctx.now })
    .where(and(eq(opportunities.id, before.id), eq(opportunities.orgId, ctx.auth.orgId)))
    .returning(opportunityColumns);
  if (!row) throw notFound('Opportunity');
  const record = serializeOpportunity(row);
  await ctx.emit('opportunity.updated', { ...record, changed_fields: changed, previous_values: previous });
  await emitStatusMove(ctx, record, toStatus(before.status));
  return record;
}

/**
 * Moves a live opportunity to the trash. The specification lists no opportunity.deleted event, so
 * none is written; restoring emits opportunity.updated with `deleted_at` in changed_fields.
 */
async function trashOpportunity(ctx: OpportunityCtx, id: string): Promise<void> {
  const before = await getLiveOpportunity(ctx.db, ctx.auth.orgId, id, true);
  await ctx.db
    .update(opportunities)
    .set({ deletedAt: ctx.now, deletedBy: ctx.auth.userId })
    .where(and(eq(opportunities.id, before.id), eq(opportunities.orgId, ctx.auth.orgId)));
}

/**
 * Brings an opportunity deleted on its own back (one that went with its lead comes back with the
 * lead). An owner deleted or deactivated meanwhile cannot keep it: the restorer becomes the owner.
 */
async function restoreOpportunity(ctx: OpportunityCtx, id: string): Promise<OpportunityRecord> {
  const [before] = await ctx.db
    .select(opportunityColumns)
    .from(opportunities)
    .where(
      and(
        eq(opportunities.id, id),
        eq(opportunities.orgId, ctx.auth.orgId),
        isNotNull(opportunities.deletedAt),
      ),
    )
    .limit(1)
    .for('update');
  if (!before) throw notFound('Trash item');
  await assertLeadLive(ctx.db, ctx.auth.orgId, before.leadId);
  const changed = ['deleted_at'];
  const previous: Record<string, unknown> = { deleted_at: iso(before.deletedAt) };
  let ownerId = before.ownerId;
  if (ownerId !== null && !(await isAssignableUser(ctx.db, ctx.auth.orgId, ownerId))) {
    changed.push('owner_id');
    previous.owner_id = ownerId;
    ownerId = ctx.auth.userId;
  }
  const [row] = await ctx.db
    .update(opportunities)
    .set({ deletedAt: null, deletedBy: null, ownerId, updatedAt: ctx.now })
    .where(and(eq(opportunities.id, before.id), eq(opportunities.orgId, ctx.auth.orgId)))
    .returning(opportunityColumns);
  if (!row) throw notFound('Trash item');
  const record = serializeOpportunity(row);
  await ctx.emit('opportunity.updated', { ...record, changed_fields: changed, previous_values: previous });
  return record;
}

/** The opportunity entry of the trash registry. */
export const opportunityTrashTypes: readonly TrashType[] = [
  {
    type: 'opportunity',
    recordKey: 'opportunity',
    resource: 'opportunities',
    schema: opportunitySchema,
    table: opportunities,
    columns: {
      id: opportunities.id,
      orgId: opportunities.orgId,
      // No name column: the note, else the stage, else "<value> <currency>" (the same rule as search_crm's).
      name: sql`coalesce(nullif(${opportunities.note}, ''), ${opportunities.pipelineStage}, ${opportunities.value}::text || ' ' || ${opportunities.currency})`,
      deletedAt: opportunities.deletedAt,
      deletedBy: opportunities.deletedBy,
    },
    restore: restoreOpportunity,
  },
];

/**
 * The opportunity entry of the owned-record registry (the area's `ownedRecords`). A transfer to an heir is
 * an owner change (opportunity.updated). A move to the trash writes nothing: the specification has
 * no opportunity.deleted event, and delete_opportunity writes none either.
 */
export const opportunityOwnership: readonly OwnedRecordTable[] = [
  {
    name: 'opportunities',
    table: opportunities,
    orgId: opportunities.orgId,
    ownerId: opportunities.ownerId,
    deletedAt: opportunities.deletedAt,
    deletedBy: opportunities.deletedBy,
    updatedAt: opportunities.updatedAt,
    async announce(ctx, ids, change) {
      if (change.kind !== 'transferred') return;
      const rows = await ctx.db
        .select(opportunityColumns)
        .from(opportunities)
        .where(and(eq(opportunities.orgId, ctx.auth.orgId), inArray(opportunities.id, [...ids])));
      for (const row of rows) {
        await ctx.emit('opportunity.updated', {
          ...serializeOpportunity(row),
          changed_fields: ['owner_id'],
          previous_values: { owner_id: change.fromUserId },
        });
      }
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Tools

const access = (
  kind: 'read' | 'write',
  permission: 'opportunities.view' | 'opportunities.create' | 'opportunities.edit' | 'opportunities.delete',
) => ({ kind, resource: 'opportunities', permission }) as const;

const opportunityOutput = z.object({ opportunity: opportunitySchema });

const SORT_FIELDS = ['created_at', 'updated_at', 'value', 'confidence', 'expected_close_date'] as const;

const SORT_COLUMNS = {
  created_at: opportunities.createdAt,
  updated_at: opportunities.updatedAt,
  value: opportunities.value,
  confidence: opportunities.confidence,
  expected_close_date: opportunities.expectedCloseDate,
} as const;

function isSortField(field: string): field is keyof typeof SORT_COLUMNS {
  return Object.hasOwn(SORT_COLUMNS, field);
}

// Query strings arrive as text, so the bounds are coerced to numbers.
const queryNumber = (what: string) => z.coerce.number().min(0).lt(MAX_VALUE).describe(what);

export const listOpportunities = defineTool({
  name: 'list_opportunities',
  title: 'List opportunities',
  description:
    'Lists the live opportunities (deals) of the organization, newest first by default. Filter by `lead_id`, `contact_id`, ' +
    '`status` (active/won/lost), `owner_id`, expected close date range (`expected_close_after`/`expected_close_before`, inclusive) ' +
    'and value range (`min_value`/`max_value`, inclusive). `search` matches words at the start of words in the note and pipeline stage. ' +
    'Paginated: returns `opportunities` plus `total`, `page`, `limit`, `totalPages`; request page 1, then increment `page` ' +
    'until page >= totalPages. `limit` is 1-100 (default 25).',
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    lead_id: objectId('lead').optional().describe('Only deals of this lead'),
    contact_id: objectId('contact').optional().describe('Only deals with this contact'),
    status: z
      .enum(OPPORTUNITY_STATUSES)
      .optional()
      .describe('Only deals with this status: active, won or lost'),
    owner_id: objectId('owner user').optional().describe('Only deals owned by this user'),
    expected_close_after: dateString('Only deals expected to close on or after this date').optional(),
    expected_close_before: dateString('Only deals expected to close on or before this date').optional(),
    min_value: queryNumber('Only deals worth at least this much (in their own currency)').optional(),
    max_value: queryNumber('Only deals worth at most this much (in their own currency)').optional(),
  }),
  output: pagedOutput('opportunities', opportunitySchema),
  access: access('read', 'opportunities.view'),
  async handler(input, { db, auth }) {
    const conditions: SQL[] = [eq(opportunities.orgId, auth.orgId), isNull(opportunities.deletedAt)];
    if (input.lead_id) conditions.push(eq(opportunities.leadId, input.lead_id));
    if (input.contact_id) conditions.push(eq(opportunities.contactId, input.contact_id));
    if (input.status) conditions.push(eq(opportunities.status, input.status));
    if (input.owner_id) conditions.push(eq(opportunities.ownerId, input.owner_id));
    if (input.expected_close_after) {
      conditions.push(gte(opportunities.expectedCloseDate, input.expected_close_after));
    }
    if (input.expected_close_before) {
      conditions.push(lte(opportunities.expectedCloseDate, input.expected_close_before));
    }
    if (input.min_value !== undefined) conditions.push(gte(opportunities.value, input.min_value));
    if (input.max_value !== undefined) conditions.push(lte(opportunities.value, input.max_value));
    const query = input.search === undefined ? null : prefixTsQuery(input.search);
    // A search with no letters or digits in it can match nothing.
    if (input.search !== undefined && query === null) return paged('opportunities', [], 0, input);
    if (query !== null) conditions.push(sql`${opportunities.search} @@ to_tsquery('simple', ${query})`);
    const where = and(...conditions);

    const order: SQL[] = [];
    if (input.sort) {
      const descending = input.sort.startsWith('-');
      const field = descending ? input.sort.slice(1) : input.sort;
      const direction = descending ? desc : asc;
      const column = isSortField(field) ? SORT_COLUMNS[field] : opportunities.createdAt;
      // Deals without a close date sort last either way.
      if (field === 'expected_close_date') order.push(sql`${column} is null`);
      order.push(direction(column), direction(opportunities.id));
    } else {
      if (query !== null) {
        order.push(desc(sql`ts_rank(${opportunities.search}, to_tsquery('simple', ${query}))`));
      }
      order.push(desc(opportunities.createdAt), desc(opportunities.id));
    }

    const [totalRow] = await db.select({ n: count() }).from(opportunities).where(where);
    const rows = await db
      .select(opportunityColumns)
      .from(opportunities)
      .where(where)
      .orderBy(...order)
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('opportunities', rows.map(serializeOpportunity), totalRow?.n ?? 0, input);
  },
});

export const getOpportunity = defineTool({
  name: 'get_opportunity',
  title: 'Get an opportunity',
  description:
    'Returns one opportunity (deal) by id. Use it when you hold an `_id`; find ids with list_opportunities (filter by lead_id, ' +
    'status or owner). Trashed opportunities and ids of other organizations answer 404.',
  input: z.strictObject(opportunityIdShape),
  output: opportunityOutput,
  access: access('read', 'opportunities.view'),
  async handler(input, { db, auth }) {
    return { opportunity: serializeOpportunity(await getLiveOpportunity(db, auth.orgId, input.id)) };
  },
});

export const createOpportunity = defineTool({
  name: 'create_opportunity',
  title: 'Create an opportunity',
  errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
  description:
    'Creates a deal on a lead. `lead_id` is required (a live lead; 404 otherwise). Optional: contact_id (a contact of that lead), ' +
    'note, value (default 0, at most 2 decimals), currency (ISO 4217, default USD), confidence 0-100 (default 0), status ' +
    'active|won|lost (default active; won/lost also stamp closed_at and emit opportunity.won/lost), pipeline_stage, ' +
    'expected_close_date (YYYY-MM-DD) and owner_id (default: the caller). Returns the new opportunity.',
  input: createOpportunityInput,
  output: opportunityOutput,
  access: access('write', 'opportunities.create'),
  async handler(input, ctx) {
    return { opportunity: await insertOpportunity(ctx, input) };
  },
});

export const updateOpportunity = defineTool({
  name: 'update_opportunity',
  title: 'Update an opportunity',
  description:
    'Changes only the fields sent of one opportunity and returns it; a field sent as null is cleared. Setting status to won or ' +
    'lost closes the deal (closed_at stamped, opportunity.won/lost emitted); back to active reopens it. A closed deal is reopened ' +
    'before it closes the other way: won -> lost or lost -> won directly is a 400 invalid_transition. Moving it to another lead ' +
    'with `lead_id` needs its contact_id to be a contact of that lead (or null). A change that changes nothing emits no event.',
  input: updateOpportunityInput,
  output: opportunityOutput,
  access: access('write', 'opportunities.edit'),
  errors: [
    {
      code: 'invalid_transition',
      when: 'status moves from won to lost or back without reopening (active) first',
    },
  ],
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    const { id, ...changes } = input;
    return { opportunity: await patchOpportunity(ctx, id, changes) };
  },
});

export const deleteOpportunity = defineTool({
  name: 'delete_opportunity',
  title: 'Delete an opportunity',
  description:
    'Moves an opportunity to the trash: it disappears from the opportunity tools and can be brought back with restore_trash_item ' +
    '(while its lead is live). To record a lost deal, set its status to lost instead.',
  input: z.strictObject(opportunityIdShape),
  output: messageOutput,
  access: access('write', 'opportunities.delete'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'sales',
  async handler(input, ctx) {
    await trashOpportunity(ctx, input.id);
    return { message: 'Opportunity moved to the trash' };
  },
});

export const opportunityTools: Tool[] = [
  listOpportunities,
  getOpportunity,
  createOpportunity,
  updateOpportunity,
  deleteOpportunity,
];
