// Opportunity tools: list, get, create, update and delete deals. The data functions, the record
// shape and the status machine are in store.ts (on the record helper, core/records.ts); this module
// holds the inputs and the tool declarations.
import { eq, gte, lte } from 'drizzle-orm';
import { z } from 'zod';
import { prefixMatch, type SortColumn } from '../../core/records.ts';
import { dateString, listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { describeMoves } from '../../core/state-machine.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import {
  insertOpportunity,
  OPPORTUNITY_STATUSES,
  opportunityRecords,
  opportunitySchema,
  opportunityStatusMachine,
  patchOpportunity,
  serializeOpportunity,
  trashOpportunity,
} from './store.ts';
import { opportunities } from './tables.ts';

const MAX_VALUE = 1e15;

// ---------------------------------------------------------------------------------------------
// Input fields

/** At most two decimals: the stored numeric(18,2) would otherwise round silently. */
function hasAtMostTwoDecimals(value: number): boolean {
  return Number(value.toFixed(2)) === value;
}

const leadIdField = objectId('lead').describe('Id of a live lead');
const contactIdField = objectId('contact')
  .nullable()
  .describe('Id of a live contact of the same lead the deal is with; null for none');
const noteField = z
  .string()
  .max(10_000)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('Free-text note about the deal; null clears it');
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
  .describe('Pipeline stage, free text (e.g. "Proposal sent"); null clears it');
const closeDateField = dateString('Expected close date')
  .nullable()
  .describe('Expected close date (YYYY-MM-DD); null clears it');
const ownerField = objectId('owner user')
  .nullable()
  .describe("Owner: an active user's id; null leaves the deal unassigned");

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
      `New status; the allowed moves: ${describeMoves(opportunityStatusMachine)}. Reopen a closed deal before closing it the other way`,
    ),
  pipeline_stage: stageField.optional(),
  expected_close_date: closeDateField.optional(),
  owner_id: ownerField.optional(),
});

// ---------------------------------------------------------------------------------------------
// Tools

const access = (
  kind: 'read' | 'write',
  permission: 'opportunities.view' | 'opportunities.create' | 'opportunities.edit' | 'opportunities.delete',
) => ({ kind, resource: 'opportunities', permission }) as const;

const opportunityOutput = z.object({ opportunity: opportunitySchema });

const SORT_FIELDS = ['created_at', 'updated_at', 'value', 'confidence', 'expected_close_date'] as const;

/** The sort fields and what each orders by; deals without a close date sort last either way. */
const SORT_COLUMNS = {
  created_at: opportunities.createdAt,
  updated_at: opportunities.updatedAt,
  value: opportunities.value,
  confidence: opportunities.confidence,
  expected_close_date: { column: opportunities.expectedCloseDate, nullsLast: true },
} satisfies Record<(typeof SORT_FIELDS)[number], SortColumn>;

// Query strings arrive as text, so the bounds are coerced to numbers.
const queryNumber = (what: string) => z.coerce.number().min(0).lt(MAX_VALUE).describe(what);

export const listOpportunities = defineTool({
  name: 'list_opportunities',
  title: 'List opportunities',
  description:
    'Lists opportunities (deals) in the pipeline, newest first, filtered by lead, contact, status, owner, close date or value, or searched. Paged.',
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
    const conditions = opportunityRecords.liveConditions(auth.orgId);
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
    return opportunityRecords.list(db, 'opportunities', serializeOpportunity, input, {
      conditions,
      sortColumns: SORT_COLUMNS,
      match: (text) => prefixMatch(opportunities.search, text),
    });
  },
});

export const getOpportunity = defineTool({
  name: 'get_opportunity',
  title: 'Get an opportunity',
  description: 'Returns one opportunity (deal) by `_id`. Find ids with list_opportunities.',
  input: z.strictObject(opportunityIdShape),
  output: opportunityOutput,
  access: access('read', 'opportunities.view'),
  async handler(input, { db, auth }) {
    return { opportunity: serializeOpportunity(await opportunityRecords.getLive(db, auth.orgId, input.id)) };
  },
});

export const createOpportunity = defineTool({
  name: 'create_opportunity',
  title: 'Create an opportunity',
  errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
  description:
    'Creates an opportunity (a deal) on a lead: value, currency, confidence, status, pipeline stage, expected close date.',
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
    'Changes some fields of an opportunity (deal); null clears one. Set `status` won or lost to close the deal, active to reopen it.',
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

export const opportunityTools = [
  listOpportunities,
  getOpportunity,
  createOpportunity,
  updateOpportunity,
  deleteOpportunity,
];
