// Leads' data functions: the record shape, and creating, changing, trashing and restoring a lead on
// the record helper (core/records.ts). Known fields are columns; any further property a caller sends
// is kept in `custom` and returned flattened at the top level, as the specification's lead shape
// allows. Every change writes its outbox event in the same transaction.
import { eq, getTableColumns, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { compileRowInsert } from '../../core/db/compiled-rows.ts';
import { liveCountSql, readLiveCount } from '../../core/live-counts.ts';
import {
  assertAssignableOwner,
  auditFields,
  defineRecordTable,
  diffFields,
  emitChange,
  type FieldNames,
  mergeCustom,
  mergePatch,
  newRecordStamp,
  noteChange,
  ownerTransferPayload,
  type RecordContext,
  withAdditional,
} from '../../core/records.ts';
import { iso } from '../../core/schemas.ts';
import { type ChildTable, restoreChildren, type TrashType, trashChildren } from '../../core/trash.ts';
import { type LeadRow, leads } from './tables.ts';

export const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'unqualified', 'client', 'lost'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

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
    ...auditFields('lead'),
  })
  .describe('A lead: the fields listed plus any additional properties stored with it, at the top level');
export type LeadRecord = z.output<typeof leadSchema>;

/** Every column but the generated search vector, which no caller needs to read back. */
const { search: _search, ...leadColumns } = getTableColumns(leads);
export type LeadData = Omit<LeadRow, 'search'>;

function toStatus(value: string): LeadStatus {
  return LEAD_STATUSES.find((s) => s === value) ?? 'new';
}

export function serializeLead(row: LeadData): LeadRecord {
  return withAdditional(
    {
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
    },
    row.custom,
  );
}

/** The leads table on the record helper: lookups, lists, trash and restore (owner fallback included). */
export const leadRecords = defineRecordTable<LeadData>({
  label: 'Lead',
  table: leads,
  select: (db) => db.select(leadColumns).from(leads).$dynamic(),
  update: (db, set, where) => db.update(leads).set(set).where(where).returning(leadColumns),
  ownerId: leads.ownerId,
});

/** Live (not trashed) lead of the organization, or a 404; `lock` takes a row lock for a read-modify-write. */
export function getLiveLead(db: Executor, orgId: string, id: string, lock = false): Promise<LeadData> {
  return leadRecords.getLive(db, orgId, id, lock);
}

/**
 * The live-count ledger's kind of leads (migration 0031 attaches the leads table under it, with no
 * bucket column: one total per organization).
 */
const LEADS_COUNT_KIND = 'leads';

/**
 * The organization's live leads from the trigger-kept ledger (core/live-counts.ts) as a scalar
 * expression, which a list reads in its page's own statement (core/records.ts listPage).
 */
export function liveLeadsTotal(orgId: string): SQL<number> {
  return liveCountSql(orgId, LEADS_COUNT_KIND);
}

/** The organization's live leads from the trigger-kept ledger (core/live-counts.ts): no scan at any size. */
export function countLiveLeads(db: Executor, orgId: string): Promise<number> {
  return readLiveCount(db, orgId, LEADS_COUNT_KIND);
}

// ---------------------------------------------------------------------------------------------
// Changes

/** The editable state of a lead: what PUT replaces and PATCH merges into. */
export interface LeadState {
  name: string;
  description: string | null;
  url: string | null;
  status: LeadStatus;
  ownerId: string | null;
  tags: string[];
  custom: Record<string, unknown>;
}

/** The fields a lead.updated event names, in the order it lists them (additional properties follow). */
const LEAD_FIELDS: FieldNames<keyof LeadState> = [
  ['name', 'name'],
  ['description', 'description'],
  ['url', 'url'],
  ['status', 'status'],
  ['ownerId', 'owner_id'],
  ['tags', 'tags'],
];

/** The fields a caller sends, by their public names (create, replace and update alike). */
export interface LeadInput {
  name?: string | undefined;
  description?: string | null | undefined;
  url?: string | null | undefined;
  status?: LeadStatus | undefined;
  owner_id?: string | null | undefined;
  tags?: string[] | undefined;
}

export function stateOf(row: LeadData): LeadState {
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

export function dedupeTags(tags: readonly string[]): string[] {
  return [...new Set(tags)];
}

/** Creates a lead from validated create_lead input; the owner defaults to the caller. */
/** A lead's insert, compiled once: creating leads is the hottest write (core/db/compiled-rows.ts). */
const insertLeadRow = compileRowInsert<typeof leads, LeadData>(leads, leadColumns);

export async function insertLead(
  ctx: RecordContext,
  input: LeadInput & { name: string },
  custom: Record<string, unknown>,
): Promise<LeadRecord> {
  const ownerId = input.owner_id === undefined ? ctx.auth.userId : input.owner_id;
  if (ownerId !== null && ownerId !== ctx.auth.userId) {
    await assertAssignableOwner(ctx.db, ctx.auth.orgId, ownerId);
  }
  const status = input.status ?? 'new';
  const rows = await insertLeadRow(ctx.db, {
    ...newRecordStamp(ctx),
    name: input.name,
    description: input.description ?? null,
    url: input.url ?? null,
    status,
    ownerId,
    tags: dedupeTags(input.tags ?? []),
    custom,
    convertedAt: status === 'client' ? ctx.now : null,
  });
  return leadRecords.created(ctx, 'lead.created', serializeLead, rows);
}

/**
 * Writes `next` over `before` and emits lead.updated (plus lead.status_changed when the status
 * moved). A change that changes nothing writes nothing and emits nothing.
 */
export async function writeLead(ctx: RecordContext, before: LeadData, next: LeadState): Promise<LeadRecord> {
  const tags = dedupeTags(next.tags);
  const state = { ...next, tags };
  if (state.ownerId !== null && state.ownerId !== before.ownerId) {
    await assertAssignableOwner(ctx.db, ctx.auth.orgId, state.ownerId);
  }
  const change = diffFields(before, state, LEAD_FIELDS, [before.custom, state.custom]);
  if (change.changed.length === 0) return serializeLead(before);
  // Becoming a client stamps converted_at once; later status moves keep it as history.
  const convertedAt = state.status === 'client' && before.convertedAt === null ? ctx.now : before.convertedAt;
  if (convertedAt !== before.convertedAt) noteChange(change, 'converted_at', null);
  const row = await leadRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    ...state,
    convertedAt,
    updatedAt: ctx.now,
  });
  const record = await emitChange(ctx, 'lead.updated', serializeLead(row), change);
  if (before.status !== state.status) {
    await ctx.emit('lead.status_changed', { ...record, previous_status: before.status });
  }
  return record;
}

/** PATCH semantics: sent fields replace, custom keys merge, a custom key sent as null is removed. */
export async function patchLead(
  ctx: RecordContext,
  id: string,
  input: LeadInput,
  custom: Record<string, unknown>,
): Promise<LeadRecord> {
  const before = await leadRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const next = mergePatch(stateOf(before), {
    name: input.name,
    description: input.description,
    url: input.url,
    status: input.status,
    ownerId: input.owner_id,
    tags: input.tags,
    custom: mergeCustom(before.custom, custom),
  });
  return writeLead(ctx, before, next);
}

// ---------------------------------------------------------------------------------------------
// Trash and ownership

/** Moves a live lead to the trash; its children (tools/index.ts collects them) go with it. */
export async function trashLead(
  ctx: RecordContext,
  children: readonly ChildTable[],
  id: string,
): Promise<void> {
  const row = await leadRecords.trash(ctx, id);
  await trashChildren(ctx.db, children, ctx.auth.orgId, [row.id], {
    deletedAt: ctx.now,
    deletedBy: ctx.auth.userId,
  });
  await ctx.emit('lead.deleted', { ...serializeLead(row), deleted_at: ctx.now.toISOString() });
}

/** Brings a trashed lead back with the children that went with it (an owner who is gone hands it to the restorer). */
async function restoreLead(
  ctx: RecordContext,
  children: readonly ChildTable[],
  id: string,
): Promise<LeadRecord> {
  const { before, row, ...change } = await leadRecords.restore(ctx, id);
  if (before.deletedAt) await restoreChildren(ctx.db, children, ctx.auth.orgId, row.id, before.deletedAt);
  return emitChange(ctx, 'lead.updated', serializeLead(row), change);
}

/** The lead entry of the trash registry (the area's `trashTypes`, collected in tools/index.ts). */
export function leadTrashType(children: readonly ChildTable[]): TrashType {
  return leadRecords.trashType({
    type: 'lead',
    recordKey: 'lead',
    resource: 'leads',
    schema: leadSchema,
    name: leads.name,
    restore: (ctx, id) => restoreLead(ctx, children, id),
  });
}

/**
 * The lead entry of the owned-record registry (the area's `ownedRecords`): after a user deletion moved
 * leads to an heir or to the trash, each moved lead gets the same event a direct change would.
 */
export function leadOwnership(children: readonly ChildTable[]) {
  return leadRecords.ownedRecords({
    name: 'leads',
    async announce(ctx, ids, change) {
      if (change.kind === 'trashed') {
        await trashChildren(ctx.db, children, ctx.auth.orgId, ids, {
          deletedAt: ctx.now,
          deletedBy: ctx.auth.userId,
        });
      }
      for (const row of await leadRecords.byIds(ctx.db, ctx.auth.orgId, ids)) {
        const record = serializeLead(row);
        if (change.kind === 'transferred') {
          await ctx.emit('lead.updated', ownerTransferPayload(record, change.fromUserId));
        } else {
          await ctx.emit('lead.deleted', { ...record, deleted_at: ctx.now.toISOString() });
        }
      }
    },
  });
}

/**
 * The name of a lead of the organization, trashed or not, or null: what a document (an invoice's
 * PDF, a proposal's page) prints as its buyer. For other areas, which never read this area's tables.
 */
export async function leadNameOf(db: Executor, orgId: string, leadId: string): Promise<string | null> {
  const [lead] = await db
    .select({ name: leads.name, orgId: leads.orgId })
    .from(leads)
    .where(eq(leads.id, leadId));
  return lead?.orgId === orgId ? lead.name : null;
}
