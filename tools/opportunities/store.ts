// Opportunities' data functions: deals on a lead, with a value in a currency, a confidence, a status
// and an owner, on the record helper (core/records.ts). Every change emits opportunity.updated; a
// move of the status to won or lost also emits opportunity.won / opportunity.lost, which is what
// revenue integrations listen for (the moves and their events are the state machine below; a closed
// deal is reopened before it closes the other way). An opportunity follows its lead into the trash
// and back (core/trash.ts ChildTable, declared in tools/opportunities/index.ts).
import { getTableColumns, sql } from 'drizzle-orm';
import { z } from 'zod';
import { type ErrorDetail, validationError } from '../../core/errors.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  diffFields,
  emitChange,
  type FieldNames,
  isAssignableUser,
  mergePatch,
  newRecordStamp,
  noteChange,
  ownerTransferPayload,
  type RecordContext,
} from '../../core/records.ts';
import { iso } from '../../core/schemas.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import type { TrashType } from '../../core/trash.ts';
import { isContactOfLead } from '../contacts/store.ts';
import { isLiveLead, restoreLeadChild } from '../leads/children.ts';
import { leadRecords } from '../leads/store.ts';
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
    ...auditFields('opportunity'),
  })
  .describe('An opportunity (deal) on a lead');
export type OpportunityRecord = z.output<typeof opportunitySchema>;

/** Every column but the generated search vector, which no caller needs to read back. */
const { search: _search, ...opportunityColumns } = getTableColumns(opportunities);
export type OpportunityData = Omit<OpportunityRow, 'search'>;

function toStatus(value: string): OpportunityStatus {
  return opportunityStatusMachine.parse(value);
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
    ...auditValues(row),
  };
}

/** The opportunities table on the record helper: lookups, lists, trash and restore (owner fallback included). */
export const opportunityRecords = defineRecordTable<OpportunityData>({
  label: 'Opportunity',
  table: opportunities,
  select: (db) => db.select(opportunityColumns).from(opportunities).$dynamic(),
  update: (db, set, where) => db.update(opportunities).set(set).where(where).returning(opportunityColumns),
  ownerId: opportunities.ownerId,
});

// ---------------------------------------------------------------------------------------------
// Changes

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

/** The fields an opportunity.updated event names, in the order it lists them. */
const OPPORTUNITY_FIELDS: FieldNames<keyof OpportunityState> = [
  ['leadId', 'lead_id'],
  ['contactId', 'contact_id'],
  ['note', 'note'],
  ['value', 'value'],
  ['currency', 'currency'],
  ['confidence', 'confidence'],
  ['status', 'status'],
  ['pipelineStage', 'pipeline_stage'],
  ['expectedCloseDate', 'expected_close_date'],
  ['ownerId', 'owner_id'],
];

function stateOf(row: OpportunityData): OpportunityState {
  return {
    leadId: row.leadId,
    contactId: row.contactId,
    note: row.note,
    value: Number(row.value),
    currency: row.currency,
    confidence: row.confidence,
    status: toStatus(row.status),
    pipelineStage: row.pipelineStage,
    expectedCloseDate: row.expectedCloseDate,
    ownerId: row.ownerId,
  };
}

/** A new deal as create_opportunity validated it (defaults applied). */
export interface NewOpportunity {
  lead_id: string;
  contact_id?: string | null | undefined;
  note?: string | null | undefined;
  value: number;
  currency: string;
  confidence: number;
  status: OpportunityStatus;
  pipeline_stage?: string | null | undefined;
  expected_close_date?: string | null | undefined;
  owner_id?: string | null | undefined;
}

/** The changes update_opportunity sends, by their public names. */
export type OpportunityInput = Partial<NewOpportunity>;

/**
 * The references in the body: the contact must be a live contact of the deal's lead and the owner
 * an active user. Both are 400s with a field detail, listed together.
 */
async function checkReferences(
  ctx: RecordContext,
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
  ctx: RecordContext,
  record: OpportunityRecord,
  previousStatus: OpportunityStatus | null,
): Promise<void> {
  const from = previousStatus ?? opportunityStatusMachine.initial;
  const event = opportunityStatusMachine.eventOf(from, record.status);
  if (event !== null) await ctx.emit(event, { ...record, previous_status: previousStatus });
}

export async function insertOpportunity(
  ctx: RecordContext,
  input: NewOpportunity,
): Promise<OpportunityRecord> {
  // An unknown, trashed or other-organization lead is a 404 "Lead not found", as for every child record.
  await leadRecords.getLive(ctx.db, ctx.auth.orgId, input.lead_id);
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
  const rows = await ctx.db
    .insert(opportunities)
    .values({
      ...newRecordStamp(ctx),
      ...state,
      closedAt: state.status === 'active' ? null : ctx.now,
    })
    .returning(opportunityColumns);
  const record = await opportunityRecords.created(ctx, 'opportunity.created', serializeOpportunity, rows);
  // Created already won or lost (e.g. logging a closed deal) is still a close the listeners must hear of.
  await emitStatusMove(ctx, record, null);
  return record;
}

/** closed_at after a status change: stamped on a move to won/lost, cleared on a move back to active. */
function closedAtAfter(before: OpportunityData, status: OpportunityStatus, now: Date): Date | null {
  if (status === 'active') return null;
  return status === before.status ? before.closedAt : now;
}

export async function patchOpportunity(
  ctx: RecordContext,
  id: string,
  input: OpportunityInput,
): Promise<OpportunityRecord> {
  const before = await opportunityRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const next = mergePatch(stateOf(before), {
    leadId: input.lead_id,
    contactId: input.contact_id,
    note: input.note,
    value: input.value,
    currency: input.currency,
    confidence: input.confidence,
    status: input.status,
    pipelineStage: input.pipeline_stage,
    expectedCloseDate: input.expected_close_date,
    ownerId: input.owner_id,
  });
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
  // The value as stored compares as a number (a driver may hand numeric back as text).
  const change = diffFields({ ...before, value: Number(before.value) }, next, OPPORTUNITY_FIELDS);
  if (change.changed.length === 0) return serializeOpportunity(before);
  const closedAt = closedAtAfter(before, next.status, ctx.now);
  if (iso(closedAt) !== iso(before.closedAt)) noteChange(change, 'closed_at', iso(before.closedAt));
  const row = await opportunityRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    ...next,
    closedAt,
    updatedAt: ctx.now,
  });
  const record = await emitChange(ctx, 'opportunity.updated', serializeOpportunity(row), change);
  await emitStatusMove(ctx, record, toStatus(before.status));
  return record;
}

// ---------------------------------------------------------------------------------------------
// Trash and ownership

/**
 * Moves a live opportunity to the trash. The specification lists no opportunity.deleted event, so
 * none is written; restoring emits opportunity.updated with `deleted_at` in changed_fields.
 */
export async function trashOpportunity(ctx: RecordContext, id: string): Promise<void> {
  await opportunityRecords.trash(ctx, id);
}

/**
 * Brings an opportunity deleted on its own back (one that went with its lead comes back with the
 * lead). An owner deleted or deactivated meanwhile cannot keep it: the restorer becomes the owner.
 */
async function restoreOpportunity(ctx: RecordContext, id: string): Promise<OpportunityRecord> {
  const { row, ...change } = await restoreLeadChild(opportunityRecords, ctx, id);
  return emitChange(ctx, 'opportunity.updated', serializeOpportunity(row), change);
}

/** The opportunity entry of the trash registry. */
export const opportunityTrashTypes: readonly TrashType[] = [
  opportunityRecords.trashType({
    type: 'opportunity',
    recordKey: 'opportunity',
    resource: 'opportunities',
    schema: opportunitySchema,
    // No name column: the note, else the stage, else "<value> <currency>" (the same rule as search_crm's).
    name: sql`coalesce(nullif(${opportunities.note}, ''), ${opportunities.pipelineStage}, ${opportunities.value}::text || ' ' || ${opportunities.currency})`,
    restore: restoreOpportunity,
  }),
];

/**
 * The opportunity entry of the owned-record registry (the area's `ownedRecords`). A transfer to an heir is
 * an owner change (opportunity.updated). A move to the trash writes nothing: the specification has
 * no opportunity.deleted event, and delete_opportunity writes none either.
 */
export const opportunityOwnership: readonly OwnedRecordTable[] = [
  opportunityRecords.ownedRecords({
    name: 'opportunities',
    async announce(ctx, ids, change) {
      if (change.kind !== 'transferred') return;
      for (const row of await opportunityRecords.byIds(ctx.db, ctx.auth.orgId, ids)) {
        await ctx.emit(
          'opportunity.updated',
          ownerTransferPayload(serializeOpportunity(row), change.fromUserId),
        );
      }
    },
  }),
];

/**
 * True when the opportunity is a live deal of that lead in the organization: the reference a
 * document (an invoice, an estimate, a proposal) may make. For other areas, which never read this
 * area's tables.
 */
export async function isOpportunityOfLead(
  db: RecordContext['db'],
  orgId: string,
  opportunityId: string,
  leadId: string,
): Promise<boolean> {
  const [deal] = await db
    .select({ id: opportunities.id })
    .from(opportunities)
    .where(
      sql`${opportunities.id} = ${opportunityId} and ${opportunities.orgId} = ${orgId} and ${opportunities.leadId} = ${leadId} and ${opportunities.deletedAt} is null`,
    );
  return deal !== undefined;
}
