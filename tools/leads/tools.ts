// Leads: the open-shaped core record of the CRM. Known fields are columns; any further property a
// caller sends is kept in `custom` and returned flattened at the top level, as the specification's
// lead shape allows. Every change writes its outbox event in the same transaction.
import {
  and,
  arrayContains,
  asc,
  count,
  desc,
  eq,
  inArray,
  isNotNull,
  isNull,
  type SQL,
  sql,
} from 'drizzle-orm';
import { z } from 'zod';
import { roleHas } from '../../core/access.ts';
import type { Executor } from '../../core/db/client.ts';
import { users } from '../../core/db/schema.ts';
import { AppError, type ErrorDetail, notFound, toAppError, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { zodDetails } from '../../core/invoke.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import { assertAssignableOwner, canonicalJson, isAssignableUser } from '../../core/records.ts';
import {
  iso,
  listParams,
  messageOutput,
  objectId,
  offsetOf,
  paged,
  pagedOutput,
} from '../../core/schemas.ts';
import {
  additionalPropertiesOf,
  NO_NUL,
  nulMessage,
  withAdditionalProperties,
} from '../../core/text-rules.ts';
import { prefixTsQuery } from '../../core/text-search.ts';
import { defineTool, type Tool, type ToolContext } from '../../core/tool.ts';
import { type ChildTable, restoreChildren, type TrashType, trashChildren } from '../../core/trash.ts';
import { type LeadRow, leadCounts, leads } from './tables.ts';

export const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'unqualified', 'client', 'lost'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

/**
 * Names an additional property may not take: they are record fields the server sets, or keys that
 * event payloads add beside the flattened record (a custom `changed_fields` would collide there).
 */
export const RESERVED_LEAD_KEYS: ReadonlySet<string> = new Set([
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
// Record shape

export const leadSchema = z
  .looseObject({
    _id: z.string().describe('Lead id (24 hex characters)'),
    name: z.string().describe('Lead name, usually the company'),
    description: z.string().nullable().describe('Free-text description, or null'),
    url: z.string().nullable().describe('Website URL, or null'),
    status: z.enum(LEAD_STATUSES).describe('Pipeline status'),
    owner_id: z.string().nullable().describe('Id of the user who owns the lead, or null when unassigned'),
    tags: z.array(z.string()).describe('Tags, without duplicates'),
    converted_at: z.string().nullable().describe('When the lead became a client (ISO 8601), or null'),
    created_by: z.string().nullable().describe('Id of the user who created the lead'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('A lead: the fields listed plus any additional properties stored with it, at the top level');
export type LeadRecord = z.output<typeof leadSchema>;

/** Every column but the generated search vector, which no caller needs to read back. */
const leadColumns = {
  id: leads.id,
  orgId: leads.orgId,
  name: leads.name,
  description: leads.description,
  url: leads.url,
  status: leads.status,
  ownerId: leads.ownerId,
  tags: leads.tags,
  custom: leads.custom,
  convertedAt: leads.convertedAt,
  createdBy: leads.createdBy,
  deletedAt: leads.deletedAt,
  deletedBy: leads.deletedBy,
  createdAt: leads.createdAt,
  updatedAt: leads.updatedAt,
};
export type LeadData = Omit<LeadRow, 'search'>;

function toStatus(value: string): LeadStatus {
  return LEAD_STATUSES.find((s) => s === value) ?? 'new';
}

export function serializeLead(row: LeadData): LeadRecord {
  // Custom keys first: reserved names keep them from shadowing a field, and this order makes sure.
  return {
    ...row.custom,
    _id: row.id,
    name: row.name,
    description: row.description,
    url: row.url,
    status: toStatus(row.status),
    owner_id: row.ownerId,
    tags: row.tags,
    converted_at: iso(row.convertedAt),
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Input fields

const nameField = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .refine(NO_NUL, nulMessage)
  .describe('Lead name, usually the company name (1-500 characters)');
const descriptionField = z
  .string()
  .max(10_000)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('Free-text description, at most 10000 characters; null clears it');
const urlField = z
  .url({ protocol: /^https?$/, message: 'must be an http or https URL' })
  .max(2000)
  .nullable()
  .describe('Website URL (http or https, at most 2000 characters); null clears it');
const statusField = z
  .enum(LEAD_STATUSES)
  .describe('Pipeline status: new, contacted, qualified, unqualified, client or lost');
const ownerField = objectId('owner user')
  .nullable()
  .describe('Id of an active user of the organization who owns the lead; null leaves it unassigned');
const tagField = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine(NO_NUL, nulMessage)
  .describe('A tag, 1-100 characters');
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

export function dedupeTags(tags: readonly string[]): string[] {
  return [...new Set(tags)];
}

// ---------------------------------------------------------------------------------------------
// Data functions

type LeadCtx = Pick<ToolContext, 'db' | 'auth' | 'emit' | 'now'>;

/** The editable state of a lead: what PUT replaces and PATCH merges into. */
interface LeadState {
  name: string;
  description: string | null;
  url: string | null;
  status: LeadStatus;
  ownerId: string | null;
  tags: string[];
  custom: Record<string, unknown>;
}

function stateOf(row: LeadData): LeadState {
  return {
    name: row.name,
    description: row.description,
    url: row.url,
    status: toStatus(row.status),
    ownerId: row.ownerId,
    tags: row.tags,
    custom: row.custom,
  };
}

/** Live (not trashed) lead of the organization, or a 404; `lock` takes a row lock for a read-modify-write. */
export async function getLiveLead(db: Executor, orgId: string, id: string, lock = false): Promise<LeadData> {
  const query = db
    .select(leadColumns)
    .from(leads)
    .where(and(eq(leads.id, id), eq(leads.orgId, orgId), isNull(leads.deletedAt)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Lead');
  return row;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Public names of the fields that differ, with their previous values (a custom key absent before is null). */
function diffLead(
  before: LeadData,
  next: LeadState,
): { changed: string[]; previous: Record<string, unknown> } {
  const changed: string[] = [];
  const previous: Record<string, unknown> = {};
  const note = (field: string, old: unknown) => {
    changed.push(field);
    previous[field] = old;
  };
  if (before.name !== next.name) note('name', before.name);
  if (before.description !== next.description) note('description', before.description);
  if (before.url !== next.url) note('url', before.url);
  if (before.status !== next.status) note('status', before.status);
  if (before.ownerId !== next.ownerId) note('owner_id', before.ownerId);
  if (!sameList(before.tags, next.tags)) note('tags', before.tags);
  const customKeys = new Set([...Object.keys(before.custom), ...Object.keys(next.custom)]);
  for (const key of customKeys) {
    const had = Object.hasOwn(before.custom, key);
    const has = Object.hasOwn(next.custom, key);
    if (had !== has || canonicalJson(before.custom[key]) !== canonicalJson(next.custom[key])) {
      note(key, had ? before.custom[key] : null);
    }
  }
  return { changed, previous };
}

/** Creates a lead from validated create_lead input; the owner defaults to the caller. */
export async function insertLead(ctx: LeadCtx, input: z.output<typeof createLeadInput>): Promise<LeadRecord> {
  const ownerId = input.owner_id === undefined ? ctx.auth.userId : input.owner_id;
  if (ownerId !== null && ownerId !== ctx.auth.userId) {
    await assertAssignableOwner(ctx.db, ctx.auth.orgId, ownerId);
  }
  const status = input.status ?? 'new';
  const [row] = await ctx.db
    .insert(leads)
    .values({
      id: newId(ctx.now),
      orgId: ctx.auth.orgId,
      name: input.name,
      description: input.description ?? null,
      url: input.url ?? null,
      status,
      ownerId,
      tags: dedupeTags(input.tags ?? []),
      custom: additionalPropertiesOf(input, CREATE_KEYS),
      convertedAt: status === 'client' ? ctx.now : null,
      createdBy: ctx.auth.userId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning(leadColumns);
  if (!row) throw new Error('insert returned no lead');
  const record = serializeLead(row);
  await ctx.emit('lead.created', record);
  return record;
}

/**
 * Writes `next` over `before` and emits lead.updated (plus lead.status_changed when the status
 * moved). A change that changes nothing writes nothing and emits nothing.
 */
export async function writeLead(ctx: LeadCtx, before: LeadData, next: LeadState): Promise<LeadRecord> {
  const tags = dedupeTags(next.tags);
  const state = { ...next, tags };
  if (state.ownerId !== null && state.ownerId !== before.ownerId) {
    await assertAssignableOwner(ctx.db, ctx.auth.orgId, state.ownerId);
  }
  const { changed, previous } = diffLead(before, state);
  if (changed.length === 0) return serializeLead(before);
  // Becoming a client stamps converted_at once; later status moves keep it as history.
  const convertedAt = state.status === 'client' && before.convertedAt === null ? ctx.now : before.convertedAt;
  if (convertedAt !== before.convertedAt) {
    changed.push('converted_at');
    previous.converted_at = null;
  }
  const [row] = await ctx.db
    .update(leads)
    .set({
      name: state.name,
      description: state.description,
      url: state.url,
      status: state.status,
      ownerId: state.ownerId,
      tags,
      custom: state.custom,
      convertedAt,
      updatedAt: ctx.now,
    })
    .where(and(eq(leads.id, before.id), eq(leads.orgId, ctx.auth.orgId)))
    .returning(leadColumns);
  if (!row) throw notFound('Lead');
  const record = serializeLead(row);
  await ctx.emit('lead.updated', { ...record, changed_fields: changed, previous_values: previous });
  if (before.status !== state.status) {
    await ctx.emit('lead.status_changed', { ...record, previous_status: before.status });
  }
  return record;
}

type PartialLeadInput = {
  name?: string | undefined;
  description?: string | null | undefined;
  url?: string | null | undefined;
  status?: LeadStatus | undefined;
  owner_id?: string | null | undefined;
  tags?: string[] | undefined;
};

/** PATCH semantics: sent fields replace, custom keys merge, a custom key sent as null is removed. */
function mergeState(before: LeadData, input: PartialLeadInput, custom: Record<string, unknown>): LeadState {
  const merged: Record<string, unknown> = { ...before.custom };
  for (const [key, value] of Object.entries(custom)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  const base = stateOf(before);
  return {
    name: input.name ?? base.name,
    description: input.description === undefined ? base.description : input.description,
    url: input.url === undefined ? base.url : input.url,
    status: input.status ?? base.status,
    ownerId: input.owner_id === undefined ? base.ownerId : input.owner_id,
    tags: input.tags ?? base.tags,
    custom: merged,
  };
}

export async function patchLead(
  ctx: LeadCtx,
  id: string,
  input: PartialLeadInput,
  custom: Record<string, unknown>,
): Promise<LeadRecord> {
  const before = await getLiveLead(ctx.db, ctx.auth.orgId, id, true);
  return writeLead(ctx, before, mergeState(before, input, custom));
}

/** Moves a live lead to the trash. */
export async function trashLead(ctx: LeadCtx, children: readonly ChildTable[], id: string): Promise<void> {
  const before = await getLiveLead(ctx.db, ctx.auth.orgId, id, true);
  const [row] = await ctx.db
    .update(leads)
    .set({ deletedAt: ctx.now, deletedBy: ctx.auth.userId })
    .where(and(eq(leads.id, before.id), eq(leads.orgId, ctx.auth.orgId)))
    .returning(leadColumns);
  if (!row) throw notFound('Lead');
  await trashChildren(ctx.db, children, ctx.auth.orgId, [row.id], {
    deletedAt: ctx.now,
    deletedBy: ctx.auth.userId,
  });
  await ctx.emit('lead.deleted', { ...serializeLead(row), deleted_at: ctx.now.toISOString() });
}

/**
 * Brings a trashed lead back. An owner who has since been deleted or deactivated cannot keep it,
 * so the restoring user becomes the owner rather than leaving it pointing at nobody.
 */
export async function restoreLead(
  ctx: LeadCtx,
  children: readonly ChildTable[],
  id: string,
): Promise<LeadRecord> {
  const [before] = await ctx.db
    .select(leadColumns)
    .from(leads)
    .where(and(eq(leads.id, id), eq(leads.orgId, ctx.auth.orgId), isNotNull(leads.deletedAt)))
    .limit(1)
    .for('update');
  if (!before) throw notFound('Trash item');
  const changed = ['deleted_at'];
  const previous: Record<string, unknown> = { deleted_at: iso(before.deletedAt) };
  let ownerId = before.ownerId;
  if (ownerId !== null && !(await isAssignableUser(ctx.db, ctx.auth.orgId, ownerId))) {
    changed.push('owner_id');
    previous.owner_id = ownerId;
    ownerId = ctx.auth.userId;
  }
  const [row] = await ctx.db
    .update(leads)
    .set({ deletedAt: null, deletedBy: null, ownerId, updatedAt: ctx.now })
    .where(and(eq(leads.id, before.id), eq(leads.orgId, ctx.auth.orgId)))
    .returning(leadColumns);
  if (!row) throw notFound('Trash item');
  if (before.deletedAt) await restoreChildren(ctx.db, children, ctx.auth.orgId, row.id, before.deletedAt);
  const record = serializeLead(row);
  await ctx.emit('lead.updated', { ...record, changed_fields: changed, previous_values: previous });
  return record;
}

/** The lead entry of the trash registry (the area's `trashTypes`, collected in tools/index.ts). */
export function leadTrashType(children: readonly ChildTable[]): TrashType {
  return {
    type: 'lead',
    recordKey: 'lead',
    resource: 'leads',
    schema: leadSchema,
    table: leads,
    columns: {
      id: leads.id,
      orgId: leads.orgId,
      name: leads.name,
      deletedAt: leads.deletedAt,
      deletedBy: leads.deletedBy,
    },
    restore: (ctx, id) => restoreLead(ctx, children, id),
  };
}

/**
 * The lead entry of the owned-record registry (the area's `ownedRecords`): after a user deletion moved
 * leads to an heir or to the trash, each moved lead gets the same event a direct change would.
 */
export function leadOwnership(children: readonly ChildTable[]): OwnedRecordTable {
  return {
    name: 'leads',
    table: leads,
    orgId: leads.orgId,
    ownerId: leads.ownerId,
    deletedAt: leads.deletedAt,
    deletedBy: leads.deletedBy,
    updatedAt: leads.updatedAt,
    async announce(ctx, ids, change) {
      if (change.kind === 'trashed') {
        await trashChildren(ctx.db, children, ctx.auth.orgId, ids, {
          deletedAt: ctx.now,
          deletedBy: ctx.auth.userId,
        });
      }
      const rows = await ctx.db
        .select(leadColumns)
        .from(leads)
        .where(and(eq(leads.orgId, ctx.auth.orgId), inArray(leads.id, [...ids])));
      for (const row of rows) {
        const record = serializeLead(row);
        if (change.kind === 'transferred') {
          await ctx.emit('lead.updated', {
            ...record,
            changed_fields: ['owner_id'],
            previous_values: { owner_id: change.fromUserId },
          });
        } else {
          await ctx.emit('lead.deleted', { ...record, deleted_at: ctx.now.toISOString() });
        }
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Tools

const access = (
  kind: 'read' | 'write',
  permission: 'leads.view' | 'leads.create' | 'leads.edit' | 'leads.delete',
) => ({ kind, resource: 'leads', permission }) as const;

const leadOutput = z.object({ lead: leadSchema });

const SORT_FIELDS = ['created_at', 'updated_at', 'name', 'status'] as const;

async function countLeads(db: Executor, where: SQL | undefined): Promise<number> {
  const [row] = await db.select({ n: count() }).from(leads).where(where);
  return row?.n ?? 0;
}

/** The organization's live leads from the trigger-maintained counter: one key read at any size. */
async function countLiveLeads(db: Executor, orgId: string): Promise<number> {
  const [row] = await db.select({ n: leadCounts.live }).from(leadCounts).where(eq(leadCounts.orgId, orgId));
  return row?.n ?? 0;
}

export const listLeads = defineTool({
  name: 'list_leads',
  title: 'List leads',
  description:
    'Lists the live leads of the organization (trashed leads are not included), newest first by default. ' +
    'Filter by `status`, `owner_id` or `tag`; `search` finds leads whose name, description, URL or status contain ' +
    'words starting with the given words (ranked by relevance unless `sort` is given; when more than 1,000 leads match, newest first, so add words to narrow it). ' +
    'Paginated: returns `leads` plus `total`, `page`, `limit`, `totalPages`; request page 1, then increment `page` ' +
    'until page >= totalPages. `limit` is 1-100 (default 25). Prefer `search` and the filters to reading every page.',
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    status: statusField.optional().describe('Only leads with this status'),
    owner_id: objectId('owner user').optional().describe('Only leads owned by this user'),
    tag: tagField.optional().describe('Only leads carrying this tag'),
  }),
  output: pagedOutput('leads', leadSchema),
  access: access('read', 'leads.view'),
  async handler(input, { db, auth }) {
    const conditions: SQL[] = [eq(leads.orgId, auth.orgId), isNull(leads.deletedAt)];
    if (input.status) conditions.push(eq(leads.status, input.status));
    if (input.owner_id) conditions.push(eq(leads.ownerId, input.owner_id));
    if (input.tag) conditions.push(arrayContains(leads.tags, [input.tag]));
    const filtered = conditions.length > 2 || input.search !== undefined;
    const query = input.search === undefined ? null : prefixTsQuery(input.search);
    // A search with no letters or digits in it can match nothing.
    if (input.search !== undefined && query === null) return paged('leads', [], 0, input);
    if (query !== null) conditions.push(sql`${leads.search} @@ to_tsquery('simple', ${query})`);
    const where = and(...conditions);

    const total = filtered ? await countLeads(db, where) : await countLiveLeads(db, auth.orgId);
    const order: SQL[] = [];
    if (input.sort) {
      const descending = input.sort.startsWith('-');
      const field = descending ? input.sort.slice(1) : input.sort;
      const direction = descending ? desc : asc;
      const column =
        field === 'name'
          ? sql`lower(${leads.name})`
          : field === 'status'
            ? leads.status
            : field === 'updated_at'
              ? leads.updatedAt
              : leads.createdAt;
      order.push(direction(column), direction(leads.id));
    } else {
      // Ranking reads the search vector of every match, so it is done while the matches are few
      // enough to rank at interactive speed; a broad search (say, one common prefix over a million
      // leads) is served newest first straight from the creation index instead.
      if (query !== null && total <= MAX_RANKED_MATCHES) {
        order.push(desc(sql`ts_rank(${leads.search}, to_tsquery('simple', ${query}))`));
      }
      order.push(desc(leads.createdAt), desc(leads.id));
    }

    const rows = await db
      .select(leadColumns)
      .from(leads)
      .where(where)
      .orderBy(...order)
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('leads', rows.map(serializeLead), total, input);
  },
});

export const getLead = defineTool({
  name: 'get_lead',
  title: 'Get a lead',
  description:
    'Returns one lead by id, with all of its additional properties at the top level. Use it when you already hold an `_id`; find ids with list_leads (`search` matches names). Trashed leads and ids of other organizations answer 404.',
  input: z.strictObject(leadIdShape),
  output: leadOutput,
  access: access('read', 'leads.view'),
  async handler(input, { db, auth }) {
    return { lead: serializeLead(await getLiveLead(db, auth.orgId, input.id)) };
  },
});

export const createLead = defineTool({
  name: 'create_lead',
  title: 'Create a lead',
  description:
    'Creates a lead. `name` is required; description, url, status (default new), owner_id (default: the caller) and tags are optional. ' +
    'Any other property (name starting with a letter, letters/digits/underscores, at most 100 of them) is stored as an additional ' +
    'property and returned with the lead. Returns the new lead. To create many leads at once use bulk_upsert_leads.',
  input: createLeadInput,
  output: leadOutput,
  access: access('write', 'leads.create'),
  async handler(input, ctx) {
    return { lead: await insertLead(ctx, input) };
  },
});

export const replaceLead = defineTool({
  name: 'replace_lead',
  title: 'Replace a lead',
  description:
    'Replaces every editable field of a lead (PUT semantics): fields left out are reset — description, url and owner_id to null, ' +
    'status to new, tags to empty — and the additional properties become exactly those sent. Use update_lead to change only some fields.',
  input: replaceLeadInput,
  output: leadOutput,
  access: access('write', 'leads.edit'),
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    const before = await getLiveLead(ctx.db, ctx.auth.orgId, input.id, true);
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
    'Changes only the fields sent of one lead (PATCH semantics) and returns the updated lead. Additional properties are merged into the existing ones; sending an additional ' +
    'property as null removes it; description, url or owner_id sent as null are cleared. A change that changes nothing emits no event.',
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

export const convertLeadToClient = defineTool({
  name: 'convert_lead_to_client',
  title: 'Convert a lead to a client',
  description:
    'Marks a lead as won: sets its status to client and stamps converted_at. Converting a lead that is already a client changes nothing.',
  input: z.strictObject(leadIdShape),
  output: leadOutput,
  access: access('write', 'leads.edit'),
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    const before = await getLiveLead(ctx.db, ctx.auth.orgId, input.id, true);
    if (before.status === 'client') return { lead: serializeLead(before) };
    return { lead: await writeLead(ctx, before, { ...stateOf(before), status: 'client' }) };
  },
});

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
    'Creates or updates up to 100 leads in one call. Each item without `_id` is created like create_lead; each item with `_id` ' +
    'is updated like update_lead (only sent fields change). Items succeed or fail independently: the response lists one result ' +
    'per item (by `index`) with status created, updated or error, plus the counts. Updating needs the leads.edit permission.',
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
    const canEdit = roleHas(ctx.auth.role, 'leads.edit');
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
          const lead = await insertLead(itemCtx, parsed.data);
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
    'Adds and/or removes tags on up to 500 leads at once. Send `lead_ids` and at least one non-empty `add` or `remove` list. ' +
    'Each lead gets its own result: updated, unchanged (it already had the requested tags), not_found (unknown or trashed id) ' +
    `or error (e.g. it would exceed ${MAX_TAGS} tags). Other leads are unaffected by one lead's failure.`,
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
    const rows = await ctx.db
      .select(leadColumns)
      .from(leads)
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
      if (sameList(tags, before.tags)) {
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
