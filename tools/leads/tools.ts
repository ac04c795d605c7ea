// Lead tools: list, get, create, replace, update, delete, convert and the bulk operations. The data
// functions are in store.ts (on the record helper, core/records.ts); this module holds the inputs
// and the tool declarations.
import { and, arrayContains, asc, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { roleHolds } from '../../core/access.ts';
import type { LeadConvertedHook } from '../../core/area.ts';
import type { Executor } from '../../core/db/client.ts';
import { AppError, type ErrorDetail, toAppError } from '../../core/errors.ts';
import { zodDetails } from '../../core/invoke.ts';
import { prefixMatch, type SortColumn, sameValue } from '../../core/records.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import {
  additionalPropertiesOf,
  NO_NUL,
  nulMessage,
  withAdditionalProperties,
} from '../../core/text-rules.ts';
import { prefixTsQuery } from '../../core/text-search.ts';
import { defineTool } from '../../core/tool.ts';
import type { ChildTable } from '../../core/trash.ts';
import { leadsCatalogue } from './catalogue.ts';
import { countLeadSearchMatches } from './search-total.ts';
import {
  dedupeTags,
  insertLead,
  LEAD_STATUSES,
  leadRecords,
  leadSchema,
  liveLeadsTotal,
  patchLead,
  serializeLead,
  stateOf,
  trashLead,
  writeLead,
} from './store.ts';
import { leads } from './tables.ts';

/**
 * Names an additional property may not take: they are record fields the server sets, or keys that
 * event payloads add beside the flattened record (a custom `changed_fields` would collide there).
 */
const RESERVED_LEAD_KEYS: ReadonlySet<string> = new Set([
  '_id',
  'id',
  'org_id',
  'created_at',
  'updated_at',
  'deleted_at',
  'deleted_by',
  'converted_at',
  'created_by',
  'search',
  'custom',
  'changed_fields',
  'previous_values',
  'previous_status',
]);
const MAX_TAGS = 50;
/** A search matching more leads than this is listed newest first rather than by relevance. */
export const MAX_RANKED_MATCHES = 1000;

// ---------------------------------------------------------------------------------------------
// Input fields

const nameField = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .refine(NO_NUL, nulMessage)
  .describe('Lead name, usually the company');
const descriptionField = z
  .string()
  .max(10_000)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('Free-text description; null clears it');
const urlField = z
  .url({ protocol: /^https?$/, message: 'must be an http or https URL' })
  .max(2000)
  .nullable()
  .describe('Website URL (http or https); null clears it');
const statusField = z.enum(LEAD_STATUSES).describe('Pipeline status');
const ownerField = objectId('owner user')
  .nullable()
  .describe("Owner: an active user's id; null leaves the lead unassigned");
const tagField = z.string().trim().min(1).max(100).refine(NO_NUL, nulMessage).describe('A tag');
const tagsField = z
  .array(tagField)
  .max(MAX_TAGS)
  .describe(`Tags, at most ${MAX_TAGS}; duplicates are dropped`);

const editableShape = {
  name: nameField,
  description: descriptionField.optional(),
  url: urlField.optional(),
  status: statusField.optional(),
  owner_id: ownerField.optional(),
  tags: tagsField.optional(),
};
const leadIdShape = { id: objectId('lead') };

function withLeadProperties<S extends z.core.$ZodLooseShape>(shape: S) {
  return withAdditionalProperties(shape, { reserved: RESERVED_LEAD_KEYS, record: 'lead' });
}

const CREATE_KEYS: ReadonlySet<string> = new Set(Object.keys(editableShape));
const UPDATE_KEYS: ReadonlySet<string> = new Set([...CREATE_KEYS, 'id']);
const BULK_UPDATE_KEYS: ReadonlySet<string> = new Set([...CREATE_KEYS, '_id']);

const partialShape = {
  ...editableShape,
  name: nameField.optional(),
};

const createLeadInput = withLeadProperties(editableShape).describe(
  'The lead; any property beyond the listed fields is kept as an additional property',
);
const replaceLeadInput = withLeadProperties({ ...leadIdShape, ...editableShape });
const updateLeadInput = withLeadProperties({ ...leadIdShape, ...partialShape });
const bulkUpdateItem = withLeadProperties({ _id: objectId('lead'), ...partialShape });

// ---------------------------------------------------------------------------------------------
// Tools

const access = (
  kind: 'read' | 'write',
  permission: 'leads.view' | 'leads.create' | 'leads.edit' | 'leads.delete',
) => ({ kind, resource: 'leads', permission }) as const;

const leadOutput = z.object({ lead: leadSchema });

const SORT_FIELDS = ['created_at', 'updated_at', 'name', 'status'] as const;

/** The sort fields and what each orders by (names case-insensitively). */
const SORT_COLUMNS = {
  created_at: leads.createdAt,
  updated_at: leads.updatedAt,
  name: sql`lower(${leads.name})`,
  status: leads.status,
} satisfies Record<(typeof SORT_FIELDS)[number], SortColumn>;

export const listLeads = defineTool({
  name: 'list_leads',
  title: 'List leads',
  description:
    'Finds and lists leads (companies or people you sell to) by name search, status, owner or tag, newest first. Paged.',
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    status: statusField.optional().describe('Only leads with this status'),
    owner_id: objectId('owner user').optional().describe('Only leads owned by this user'),
    tag: tagField.optional().describe('Only leads carrying this tag'),
  }),
  output: pagedOutput('leads', leadSchema),
  access: access('read', 'leads.view'),
  async handler(input, { db, auth }) {
    const conditions = leadRecords.liveConditions(auth.orgId);
    if (input.status) conditions.push(eq(leads.status, input.status));
    if (input.owner_id) conditions.push(eq(leads.ownerId, input.owner_id));
    if (input.tag) conditions.push(arrayContains(leads.tags, [input.tag]));
    const filtered = conditions.length > 2 || input.search !== undefined;
    const { search } = input;
    return leadRecords.list(db, 'leads', serializeLead, input, {
      conditions,
      sortColumns: SORT_COLUMNS,
      match: (text) => prefixMatch(leads.search, text),
      // Unfiltered, the total is the trigger-kept live-count ledger (core/live-counts.ts): no scan.
      ...(filtered ? {} : { total: liveLeadsTotal(auth.orgId) }),
      // A search and nothing else counts on the words table (tools/leads/search-total.ts).
      ...(search !== undefined && conditions.length === 2
        ? { total: () => searchTotal(db, auth.orgId, conditions, search) }
        : {}),
      // Ranking reads the search vector of every match, so it is done while the matches are few
      // enough to rank at interactive speed; a broad search (say, one common prefix over a million
      // leads) is served newest first straight from the creation index instead.
      rankedUpTo: MAX_RANKED_MATCHES,
    });
  },
});

/** The exact total of a search with no other filter: on the words table when its shape allows, else counted. */
async function searchTotal(
  db: Executor,
  orgId: string,
  conditions: readonly SQL[],
  search: string,
): Promise<number> {
  const prefix = prefixTsQuery(search);
  const match = prefixMatch(leads.search, search);
  // The list answers a search without words before asking for a total.
  if (prefix === null || match === null) return 0;
  const counted = await countLeadSearchMatches(db, orgId, prefix);
  return counted ?? leadRecords.count(db, and(...conditions, match.where));
}

export const getLead = defineTool({
  name: 'get_lead',
  title: 'Get a lead',
  description:
    'Returns the details of one lead by `_id`, with its additional properties. Find ids with list_leads.',
  input: z.strictObject(leadIdShape),
  output: leadOutput,
  access: access('read', 'leads.view'),
  async handler(input, { db, auth }) {
    return { lead: serializeLead(await leadRecords.getLive(db, auth.orgId, input.id)) };
  },
});

export const createLead = defineTool({
  name: 'create_lead',
  title: 'Create a lead',
  description:
    'Creates a lead (a prospect company or person); properties beyond the listed fields are kept as additional properties. For many leads use bulk_upsert_leads.',
  input: createLeadInput,
  output: leadOutput,
  access: access('write', 'leads.create'),
  async handler(input, ctx) {
    return { lead: await insertLead(ctx, input, additionalPropertiesOf(input, CREATE_KEYS)) };
  },
});

export const replaceLead = defineTool({
  name: 'replace_lead',
  title: 'Replace a lead',
  description:
    'Replaces a whole lead (PUT): fields left out are reset and the additional properties become exactly those sent. Use update_lead to change some fields.',
  input: replaceLeadInput,
  output: leadOutput,
  access: access('write', 'leads.edit'),
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    const before = await leadRecords.getLive(ctx.db, ctx.auth.orgId, input.id, true);
    const lead = await writeLead(ctx, before, {
      name: input.name,
      description: input.description ?? null,
      url: input.url ?? null,
      status: input.status ?? 'new',
      ownerId: input.owner_id ?? null,
      tags: input.tags ?? [],
      custom: additionalPropertiesOf(input, UPDATE_KEYS),
    });
    return { lead };
  },
});

export const updateLead = defineTool({
  name: 'update_lead',
  title: 'Update a lead',
  description:
    'Changes some fields of a lead (status, owner, tags, name, additional properties): only the fields sent change; null clears or removes one.',
  input: updateLeadInput,
  output: leadOutput,
  access: access('write', 'leads.edit'),
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    return { lead: await patchLead(ctx, input.id, input, additionalPropertiesOf(input, UPDATE_KEYS)) };
  },
});

/** delete_lead: its children (tools/index.ts collects them from the areas) go to the trash with it. */
export function deleteLeadTool(children: readonly ChildTable[]) {
  return defineTool({
    name: 'delete_lead',
    title: 'Delete a lead',
    description:
      'Moves a lead to the trash: it disappears from every lead tool and can be brought back with restore_trash_item.',
    input: z.strictObject(leadIdShape),
    output: messageOutput,
    access: access('write', 'leads.delete'),
    annotations: { destructiveHint: true, idempotentHint: true },
    async handler(input, ctx) {
      await trashLead(ctx, children, input.id);
      return { message: 'Lead moved to the trash' };
    },
  });
}

/** Built with the other areas' leadConverted hooks (tools/index.ts collects them). */
export function convertLeadToClientTool(hooks: readonly LeadConvertedHook[]) {
  return defineTool({
    name: 'convert_lead_to_client',
    title: 'Convert a lead to a client',
    description:
      'Converts a lead into a client (a won customer): sets status client, stamps converted_at and starts the client onboarding. Repeating it changes nothing.',
    input: z.strictObject(leadIdShape),
    output: leadOutput,
    access: access('write', 'leads.edit'),
    annotations: { idempotentHint: true },
    async handler(input, ctx) {
      const before = await leadRecords.getLive(ctx.db, ctx.auth.orgId, input.id, true);
      if (before.status === 'client') return { lead: serializeLead(before) };
      const lead = await writeLead(ctx, before, { ...stateOf(before), status: 'client' });
      for (const hook of hooks) await hook(ctx, before.id);
      return { lead };
    },
  });
}

const itemError = z
  .object({
    code: z.string().describe('Error code, e.g. validation_failed, not_found, forbidden'),
    message: z.string().describe('What went wrong'),
    details: z
      .array(
        z.object({
          field: z.string().describe('The offending field of the item'),
          message: z.string().describe('What is wrong with it'),
          code: z.string().describe('Machine-readable reason'),
        }),
      )
      .optional()
      .describe('Per-field problems, for validation errors'),
  })
  .describe('Why this item failed; the other items are unaffected');

function itemErrorOf(err: unknown): z.output<typeof itemError> {
  const appError = toAppError(err);
  return {
    code: appError.code,
    message: appError.body.message ?? appError.body.error,
    ...(appError.body.details ? { details: appError.body.details } : {}),
  };
}

function itemValidationError(details: ErrorDetail[]): AppError {
  return new AppError('validation_failed', { message: 'Validation failed', details });
}

export const bulkUpsertLeads = defineTool({
  name: 'bulk_upsert_leads',
  title: 'Create or update many leads',
  description:
    'Imports a batch of up to 100 leads: items without `_id` are created, items with `_id` updated. Each item succeeds or fails on its own.',
  input: z.strictObject({
    items: z
      .array(
        z
          .record(z.string(), z.unknown())
          .describe('A lead to create (no `_id`) or the changes for an existing lead (with `_id`)'),
      )
      .min(1)
      .max(100)
      .describe('1 to 100 items'),
  }),
  output: z.object({
    results: z
      .array(
        z.object({
          index: z.number().int().describe('Position of the item in the request'),
          status: z.enum(['created', 'updated', 'error']).describe('What happened to the item'),
          lead: leadSchema.optional().describe('The lead as stored, when the item succeeded'),
          error: itemError.optional(),
        }),
      )
      .describe('One result per item, in request order'),
    created: z.number().int().describe('Items created'),
    updated: z.number().int().describe('Items updated'),
    failed: z.number().int().describe('Items that failed'),
  }),
  access: access('write', 'leads.create'),
  async handler(input, ctx) {
    const canEdit = roleHolds(ctx.auth.role, leadsCatalogue.permissions['leads.edit']);
    const results = [];
    for (const [index, item] of input.items.entries()) {
      const isUpdate = Object.hasOwn(item, '_id');
      try {
        if (isUpdate && !canEdit) {
          throw new AppError('forbidden', { message: 'Updating leads requires the leads.edit permission' });
        }
        // A savepoint per item: a failing item rolls back only its own writes and events.
        const result = await ctx.db.transaction(async (sp) => {
          const itemCtx = { ...ctx, db: sp };
          if (isUpdate) {
            const parsed = bulkUpdateItem.safeParse(item);
            if (!parsed.success) throw itemValidationError(zodDetails(parsed.error));
            const lead = await patchLead(
              itemCtx,
              parsed.data._id,
              parsed.data,
              additionalPropertiesOf(parsed.data, BULK_UPDATE_KEYS),
            );
            return { status: 'updated' as const, lead };
          }
          const parsed = createLeadInput.safeParse(item);
          if (!parsed.success) throw itemValidationError(zodDetails(parsed.error));
          const lead = await insertLead(
            itemCtx,
            parsed.data,
            additionalPropertiesOf(parsed.data, CREATE_KEYS),
          );
          return { status: 'created' as const, lead };
        });
        results.push({ index, ...result });
      } catch (err) {
        const error = itemErrorOf(err);
        if (error.code === 'internal') {
          ctx.services.logger.error(
            { err, tool: 'bulk_upsert_leads', requestId: ctx.requestId, index },
            'item failed',
          );
        }
        results.push({ index, status: 'error' as const, error });
      }
    }
    return {
      results,
      created: results.filter((r) => r.status === 'created').length,
      updated: results.filter((r) => r.status === 'updated').length,
      failed: results.filter((r) => r.status === 'error').length,
    };
  },
});

export const bulkTagLeads = defineTool({
  name: 'bulk_tag_leads',
  title: 'Add or remove tags on many leads',
  description:
    'Adds and/or removes tags on up to 500 leads at once (`lead_ids` plus `add` and/or `remove`), with one result per lead.',
  input: z
    .strictObject({
      lead_ids: z.array(objectId('lead')).min(1).max(500).describe('Ids of the leads to change, 1 to 500'),
      add: z.array(tagField).max(MAX_TAGS).optional().describe('Tags to add to each lead'),
      remove: z.array(tagField).max(MAX_TAGS).optional().describe('Tags to remove from each lead'),
    })
    .superRefine((value, ctx) => {
      const add = value.add ?? [];
      const remove = value.remove ?? [];
      if (add.length === 0 && remove.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['add'], message: 'send at least one tag in add or remove' });
      }
      const both = add.filter((t) => remove.includes(t));
      if (both.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['remove'],
          message: `a tag cannot be both added and removed: ${both.join(', ')}`,
        });
      }
    })
    // The first rule above as far as JSON Schema can say it: add or remove is given.
    .meta({ anyOf: [{ required: ['add'] }, { required: ['remove'] }] }),
  output: z.object({
    results: z
      .array(
        z.object({
          index: z.number().int().describe('Position of the id in lead_ids'),
          _id: z.string().describe('The lead id'),
          status: z
            .enum(['updated', 'unchanged', 'not_found', 'error'])
            .describe('What happened to this lead'),
          tags: z.array(z.string()).optional().describe("The lead's tags afterwards, when found"),
          error: itemError.optional(),
        }),
      )
      .describe('One result per id, in request order'),
    updated: z.number().int().describe('Leads whose tags changed'),
    unchanged: z.number().int().describe('Leads that already matched'),
    failed: z.number().int().describe('Ids not found or failed'),
  }),
  access: access('write', 'leads.edit'),
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    const add = dedupeTags(input.add ?? []);
    const remove = new Set(input.remove ?? []);
    const rows = await leadRecords
      .select(ctx.db)
      .where(
        and(
          eq(leads.orgId, ctx.auth.orgId),
          isNull(leads.deletedAt),
          inArray(leads.id, [...new Set(input.lead_ids)]),
        ),
      )
      .orderBy(asc(leads.id))
      .for('update');
    const byId = new Map(rows.map((r) => [r.id, r]));
    const results = [];
    for (const [index, id] of input.lead_ids.entries()) {
      const before = byId.get(id);
      if (!before) {
        results.push({
          index,
          _id: id,
          status: 'not_found' as const,
          error: { code: 'not_found', message: 'Lead not found' },
        });
        continue;
      }
      const tags = dedupeTags([...before.tags.filter((t) => !remove.has(t)), ...add]);
      if (tags.length > MAX_TAGS) {
        results.push({
          index,
          _id: id,
          status: 'error' as const,
          tags: before.tags,
          error: itemErrorOf(
            itemValidationError([
              { field: 'tags', message: `a lead holds at most ${MAX_TAGS} tags`, code: 'too_big' },
            ]),
          ),
        });
        continue;
      }
      if (sameValue(tags, before.tags)) {
        results.push({ index, _id: id, status: 'unchanged' as const, tags });
        continue;
      }
      const lead = await writeLead(ctx, before, { ...stateOf(before), tags });
      // A repeated id sees its own earlier change.
      const after = byId.get(id);
      if (after) byId.set(id, { ...after, tags: lead.tags, updatedAt: ctx.now });
      results.push({ index, _id: id, status: 'updated' as const, tags: lead.tags });
    }
    return {
      results,
      updated: results.filter((r) => r.status === 'updated').length,
      unchanged: results.filter((r) => r.status === 'unchanged').length,
      failed: results.filter((r) => r.status === 'not_found' || r.status === 'error').length,
    };
  },
});
