// Custom object records: the records of each custom object (definitions.ts), whose `values` are
// validated against the definition's fields (fields.ts). Records are everyday data (members): they
// have an owner, go to the trash and come back from it, and follow their owner's deletion. The
// specification defines no custom-object events, so nothing here writes to the outbox.
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { validationError } from '../../core/errors.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import {
  assertAssignableOwner,
  auditFields,
  auditValues,
  defineRecordTable,
  diffFields,
  getLiveWithin,
  mergePatch,
  newRecordStamp,
  type RecordContext,
  type SortColumn,
} from '../../core/records.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import type { TrashType } from '../../core/trash.ts';
import { access, definitionTable, TOOLSET, textArray } from './definitions.ts';
import { validateCustomValues } from './fields.ts';
import { type CustomFieldDef, customObjectRecords, customObjects } from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Record shape

const recordSchema = z
  .object({
    _id: z.string().describe('Record id, 24 hex characters'),
    object_id: z.string().describe('Id of the custom object (definition) this record belongs to'),
    values: z
      .record(z.string(), z.unknown().describe('The value of the field with this key'))
      .describe(
        "The record's field values keyed by field key; an optional field without a value is null (or absent when the field was added after the record was last written)",
      ),
    owner_id: z.string().nullable().describe('Id of the user who owns the record'),
    ...auditFields('record'),
  })
  .describe('A record of a custom object');
type RecordOut = z.output<typeof recordSchema>;

type RecordRow = typeof customObjectRecords.$inferSelect;

function serializeRecord(row: RecordRow): RecordOut {
  return {
    _id: row.id,
    object_id: row.objectId,
    values: row.values,
    owner_id: row.ownerId,
    ...auditValues(row),
  };
}

// ---------------------------------------------------------------------------------------------
// Input fields

const valuesField = z
  .record(z.string(), z.unknown().describe('The value for the field with this key'))
  .describe(
    "Field values keyed by field key, checked against the object's fields: text is a string, number a number, date a YYYY-MM-DD string, boolean true/false, choice one of the options, user the id of a user and lead the id of a lead of the organization",
  );
const ownerField = objectId('owner user').describe(
  'Id of an active user of the organization who owns the record',
);
const objectPathShape = { objectId: objectId('custom object') };
const recordPathShape = { ...objectPathShape, recordId: objectId('custom object record') };

// ---------------------------------------------------------------------------------------------
// Data functions

/**
 * The records table on the record helper: lookups, lists, writes, trash, and restore with the owner
 * fallback (an unowned record, too, goes to the restoring user).
 */
const recordTable = defineRecordTable<RecordRow>({
  label: 'Custom object record',
  table: customObjectRecords,
  select: (db) => db.select().from(customObjectRecords).$dynamic(),
  update: (db, set, where) => db.update(customObjectRecords).set(set).where(where).returning(),
  owner: {
    column: customObjectRecords.ownerId,
    of: (row) => row.ownerId,
    set: (ownerId) => ({ ownerId }),
    claimUnowned: true,
  },
});

/** A live record of the given definition; a record of another definition or in the trash is a 404. */
function getLiveRecord(
  db: Executor,
  orgId: string,
  objectId: string,
  recordId: string,
  lock = false,
): Promise<RecordRow> {
  return getLiveWithin(recordTable, db, orgId, recordId, eq(customObjectRecords.objectId, objectId), lock);
}

/**
 * Applies a partial `values` change: sent keys replace, a key sent as null clears an optional field.
 * Unknown keys, wrong types and clearing a required field are field errors under `values.<key>`.
 */
async function mergeValues(
  db: Executor,
  orgId: string,
  defs: readonly CustomFieldDef[],
  current: Record<string, unknown>,
  sent: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const checked = await validateCustomValues(db, orgId, defs, sent, { partial: true, pathPrefix: 'values' });
  if (checked.errors.length > 0) throw validationError(checked.errors);
  return { ...current, ...checked.values };
}

/** Brings a trashed record back; a gone or deactivated owner is replaced by the restoring user, as for leads. */
async function restoreRecord(ctx: RecordContext, id: string): Promise<RecordOut> {
  const { row } = await recordTable.restore(ctx, id);
  return serializeRecord(row);
}

// ---------------------------------------------------------------------------------------------
// Tools

const recordOutput = z.object({ record: recordSchema });

const RECORD_SORT_FIELDS = ['created_at', 'updated_at'] as const;
const SORT_COLUMNS: Record<(typeof RECORD_SORT_FIELDS)[number], SortColumn> = {
  created_at: customObjectRecords.createdAt,
  updated_at: customObjectRecords.updatedAt,
};

export const listCustomObjectRecords = defineTool({
  name: 'list_custom_object_records',
  title: 'List custom object records',
  description:
    'Lists the live records of one custom object, newest first; filter by owner; `search` finds records whose text fields contain the text.',
  input: z.strictObject({
    ...objectPathShape,
    ...listParams(RECORD_SORT_FIELDS),
    owner_id: objectId('owner user').optional().describe('Only records owned by this user'),
  }),
  output: pagedOutput('records', recordSchema),
  access: access('read', 'custom_objects.view'),
  toolset: TOOLSET,
  async handler(input, { db, auth }) {
    const definition = await definitionTable.get(db, auth.orgId, input.objectId);
    const conditions = recordTable.liveConditions(auth.orgId);
    conditions.push(eq(customObjectRecords.objectId, definition.id));
    if (input.owner_id) conditions.push(eq(customObjectRecords.ownerId, input.owner_id));
    // Only the text fields' values are searched: keys and other types would match by accident.
    const textKeys = definition.fields.filter((f) => f.type === 'text').map((f) => f.key);
    return recordTable.list(db, 'records', serializeRecord, input, {
      conditions,
      sortColumns: SORT_COLUMNS,
      match: (search) =>
        textKeys.length === 0
          ? null
          : {
              where: sql`exists (select 1 from jsonb_each_text(${customObjectRecords.values}) as v(key, value) where v.key = any(${textArray(textKeys)}) and v.value ilike ${`%${escapeLike(search)}%`})`,
            },
    });
  },
});

export const getCustomObjectRecord = defineTool({
  name: 'get_custom_object_record',
  title: 'Get a custom object record',
  description:
    'Returns one record of a custom object by its object id and record id. A record id that belongs to another custom object, a trashed record or another organization answers 404.',
  input: z.strictObject(recordPathShape),
  output: recordOutput,
  access: access('read', 'custom_objects.view'),
  toolset: TOOLSET,
  async handler(input, { db, auth }) {
    const definition = await definitionTable.get(db, auth.orgId, input.objectId);
    return { record: serializeRecord(await getLiveRecord(db, auth.orgId, definition.id, input.recordId)) };
  },
});

export const createCustomObjectRecord = defineTool({
  name: 'create_custom_object_record',
  title: 'Create a custom object record',
  description:
    'Creates a record of a custom object. `values` holds the field values keyed by field key (see get_custom_object for the fields): every required field must be present, unknown keys and wrong types are refused with 400 and a detail per field (`values.<key>`). `owner_id` defaults to the caller.',
  input: z.strictObject({
    ...objectPathShape,
    values: valuesField,
    owner_id: ownerField.optional(),
  }),
  output: recordOutput,
  access: access('write', 'custom_objects.create'),
  toolset: TOOLSET,
  async handler(input, ctx) {
    const { orgId, userId } = ctx.auth;
    const definition = await definitionTable.get(ctx.db, orgId, input.objectId, 'share');
    const checked = await validateCustomValues(ctx.db, orgId, definition.fields, input.values, {
      partial: false,
      pathPrefix: 'values',
    });
    if (checked.errors.length > 0) throw validationError(checked.errors);
    const ownerId = input.owner_id ?? userId;
    if (input.owner_id !== undefined) await assertAssignableOwner(ctx.db, orgId, ownerId);
    const [row] = await ctx.db
      .insert(customObjectRecords)
      .values({ ...newRecordStamp(ctx), objectId: definition.id, values: checked.values, ownerId })
      .returning();
    if (!row) throw new Error('insert returned no custom object record');
    return { record: serializeRecord(row) };
  },
});

export const updateCustomObjectRecord = defineTool({
  name: 'update_custom_object_record',
  title: 'Update a custom object record',
  description:
    'Changes a record of a custom object with merge semantics: only the keys sent in `values` change, the others keep their values; a key sent as null clears ' +
    'an optional field (a required field cannot be cleared). `owner_id` moves the record to another active user. Values are checked like on create (400 with `values.<key>` details).',
  input: z.strictObject({
    ...recordPathShape,
    values: valuesField.optional(),
    owner_id: ownerField.optional(),
  }),
  output: recordOutput,
  access: access('write', 'custom_objects.edit'),
  annotations: { idempotentHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const { orgId } = ctx.auth;
    const definition = await definitionTable.get(ctx.db, orgId, input.objectId, 'share');
    const before = await getLiveRecord(ctx.db, orgId, definition.id, input.recordId, true);
    const values =
      input.values === undefined
        ? undefined
        : await mergeValues(ctx.db, orgId, definition.fields, before.values, input.values);
    if (input.owner_id !== undefined && input.owner_id !== before.ownerId) {
      await assertAssignableOwner(ctx.db, orgId, input.owner_id);
    }
    const next = mergePatch(
      { values: before.values, ownerId: before.ownerId },
      { values, ownerId: input.owner_id },
    );
    const change = diffFields(before, next, [['ownerId', 'owner_id']], [before.values, next.values]);
    // Nothing to change: keep updated_at, so sync clients do not see a phantom modification.
    if (change.changed.length === 0) return { record: serializeRecord(before) };
    const row = await recordTable.write(ctx.db, orgId, before.id, { ...next, updatedAt: ctx.now });
    return { record: serializeRecord(row) };
  },
});

export const deleteCustomObjectRecord = defineTool({
  name: 'delete_custom_object_record',
  title: 'Delete a custom object record',
  description:
    'Moves a record of a custom object to the trash: it disappears from the record tools and can be brought back with restore_trash_item (its `_id`).',
  input: z.strictObject(recordPathShape),
  output: messageOutput,
  access: access('write', 'custom_objects.delete'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const { orgId } = ctx.auth;
    const definition = await definitionTable.get(ctx.db, orgId, input.objectId);
    // Found and locked within its object first, so the trash stamp is written by id (recordTable.trash would look it up again).
    const before = await getLiveRecord(ctx.db, orgId, definition.id, input.recordId, true);
    await recordTable.write(ctx.db, orgId, before.id, { deletedAt: ctx.now, deletedBy: ctx.auth.userId });
    return { message: 'Custom object record moved to the trash' };
  },
});

export const recordTools = [
  listCustomObjectRecords,
  getCustomObjectRecord,
  createCustomObjectRecord,
  updateCustomObjectRecord,
  deleteCustomObjectRecord,
];

// ---------------------------------------------------------------------------------------------
// Registries

/** The record entry of the trash registry; definitions are deleted for good and never in the trash. */
export const customObjectRecordTrashTypes: readonly TrashType[] = [
  recordTable.trashType({
    type: 'custom_object_record',
    recordKey: 'record',
    resource: 'custom_objects',
    schema: recordSchema,
    // No name column: the object's name and its first non-empty value by key, e.g. "Vehicle: VW Golf".
    name: sql`(select ${customObjects.name} from ${customObjects} where ${customObjects.id} = ${customObjectRecords.objectId}) || coalesce(': ' || left((select v.value from jsonb_each_text(${customObjectRecords.values}) as v where v.value <> '' order by v.key limit 1), 80), '')`,
    restore: restoreRecord,
  }),
];

/** Records follow their owner's deletion like leads; there are no custom-object events to announce it with. */
export const customObjectRecordOwnership: readonly OwnedRecordTable[] = [
  recordTable.ownedRecords({ name: 'custom_object_records', async announce() {} }),
];
