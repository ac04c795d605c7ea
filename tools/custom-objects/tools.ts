// Custom objects: record types an organization defines for itself (a definition names typed fields)
// and the records of each type, whose `values` are validated against the definition. Definitions
// are workspace settings (admins); records are everyday data (members). The specification defines
// no custom-object events, so nothing here writes to the outbox.
import { and, asc, count, desc, eq, inArray, isNotNull, isNull, ne, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Permission } from '../../core/access.ts';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError, notFound, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import { assertAssignableOwner, isAssignableUser } from '../../core/records.ts';
import { listParams, messageOutput, objectId, offsetOf, paged, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool, type Tool } from '../../core/tool.ts';
import type { TrashContext, TrashType } from '../../core/trash.ts';
import { customFieldDefOutput, customFieldDefsSchema, toFieldDefs, validateCustomValues } from './fields.ts';
import { type CustomFieldDef, customObjectRecords, customObjects } from './tables.ts';

const TOOLSET = 'customization';

// ---------------------------------------------------------------------------------------------
// Record shapes

const customObjectSchema = z
  .object({
    _id: z.string().describe('Custom object (definition) id, 24 hex characters'),
    name: z.string().describe('Name of the custom object, unique in the organization (case-insensitively)'),
    description: z.string().nullable().describe('What the object is for, or null'),
    fields: z.array(customFieldDefOutput).describe('The fields its records hold, in display order'),
    created_by: z.string().nullable().describe('Id of the user who created the definition'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('A custom object definition: a named record type with typed fields');
type CustomObjectOut = z.output<typeof customObjectSchema>;

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
    created_by: z.string().nullable().describe('Id of the user who created the record'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('A record of a custom object');
type RecordOut = z.output<typeof recordSchema>;

type DefinitionRow = typeof customObjects.$inferSelect;
type RecordRow = typeof customObjectRecords.$inferSelect;

function serializeField(def: CustomFieldDef): z.output<typeof customFieldDefOutput> {
  return {
    key: def.key,
    label: def.label,
    type: def.type,
    required: def.required,
    ...(def.type === 'choice' ? { options: def.options ?? [] } : {}),
  };
}

function serializeObject(row: DefinitionRow): CustomObjectOut {
  return {
    _id: row.id,
    name: row.name,
    description: row.description,
    fields: row.fields.map(serializeField),
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function serializeRecord(row: RecordRow): RecordOut {
  return {
    _id: row.id,
    object_id: row.objectId,
    values: row.values,
    owner_id: row.ownerId,
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
  .max(100)
  .refine(NO_NUL, nulMessage)
  .describe('Name of the custom object, 1-100 characters, unique in the organization (case-insensitively)');
const descriptionField = z
  .string()
  .max(2000)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('What the object is for, at most 2000 characters; null clears it');
const fieldsField = customFieldDefsSchema.describe(
  'The fields of the object: each {key, label, type: text|number|date|boolean|choice|user|lead, required?, options? (choice only)}; keys are unique',
);
const valuesField = z
  .record(z.string(), z.unknown().describe('The value for the field with this key'))
  .describe(
    "Field values keyed by field key, checked against the object's fields: text is a string, number a number, date a YYYY-MM-DD string, boolean true/false, choice one of the options, user the id of a user and lead the id of a lead of the organization",
  );
const ownerField = objectId('owner user').describe(
  'Id of an active user of the organization who owns the record',
);
const definitionIdShape = { id: objectId('custom object') };
const objectPathShape = { objectId: objectId('custom object') };
const recordPathShape = { ...objectPathShape, recordId: objectId('custom object record') };

// ---------------------------------------------------------------------------------------------
// Data functions

/**
 * The organization's definition, or a 404. `lock` takes a row lock: `update` while the definition
 * changes, `share` while a record is written against it, so a record cannot slip past a rule (a
 * new required field) that a concurrent definition change is checking.
 */
async function getDefinition(
  db: Executor,
  orgId: string,
  id: string,
  lock?: 'update' | 'share',
): Promise<DefinitionRow> {
  const query = db
    .select()
    .from(customObjects)
    .where(and(eq(customObjects.id, id), eq(customObjects.orgId, orgId)))
    .limit(1);
  const [row] = lock ? await query.for(lock) : await query;
  if (!row) throw notFound('Custom object');
  return row;
}

/** A live record of the given definition; a record of another definition or in the trash is a 404. */
async function getLiveRecord(
  db: Executor,
  orgId: string,
  objectId: string,
  recordId: string,
  lock = false,
): Promise<RecordRow> {
  const query = db
    .select()
    .from(customObjectRecords)
    .where(
      and(
        eq(customObjectRecords.id, recordId),
        eq(customObjectRecords.orgId, orgId),
        eq(customObjectRecords.objectId, objectId),
        isNull(customObjectRecords.deletedAt),
      ),
    )
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Custom object record');
  return row;
}

function nameTaken(): AppError {
  return new AppError('conflict', {
    message: 'A custom object with this name already exists',
    details: [
      { field: 'name', message: 'already in use (names are compared case-insensitively)', code: 'duplicate' },
    ],
  });
}

/** Refuses a name another definition of the organization holds (the unique index backs this up). */
async function assertNameFree(db: Executor, orgId: string, name: string, exceptId?: string): Promise<void> {
  const conditions: SQL[] = [
    eq(customObjects.orgId, orgId),
    sql`lower(${customObjects.name}) = ${name.toLowerCase()}`,
  ];
  if (exceptId) conditions.push(ne(customObjects.id, exceptId));
  const [row] = await db
    .select({ id: customObjects.id })
    .from(customObjects)
    .where(and(...conditions))
    .limit(1);
  if (row) throw nameTaken();
}

async function withNameConflict<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken();
    throw err;
  }
}

/** Records of a definition matching an extra condition; `live` leaves out the trash. */
async function countRecords(
  db: Executor,
  orgId: string,
  objectId: string,
  condition: SQL | undefined,
  live: boolean,
): Promise<number> {
  const conditions: (SQL | undefined)[] = [
    eq(customObjectRecords.orgId, orgId),
    eq(customObjectRecords.objectId, objectId),
    condition,
  ];
  if (live) conditions.push(isNull(customObjectRecords.deletedAt));
  const [row] = await db
    .select({ n: count() })
    .from(customObjectRecords)
    .where(and(...conditions));
  return row?.n ?? 0;
}

/** A text[] literal of bound parameters (drizzle would expand a bare JS array into a row list). */
function textArray(items: readonly string[]): SQL {
  return sql`array[${sql.join(
    items.map((item) => sql`${item}`),
    sql`, `,
  )}]::text[]`;
}

/** `values` holds a non-null value under `key`. */
function holdsValue(key: string): SQL {
  return sql`coalesce(jsonb_typeof(${customObjectRecords.values} -> ${key}), 'null') <> 'null'`;
}

/** No value under `key` as a required field sees it: absent, null or (for text) blank. */
function lacksValue(key: string): SQL {
  return sql`(not (${holdsValue(key)}) or btrim(${customObjectRecords.values} ->> ${key}) = '')`;
}

function conflictOn(field: string, message: string, code: string): AppError {
  return new AppError('conflict', { message, details: [{ field, message, code }] });
}

/**
 * Refuses field changes the stored records would no longer satisfy: a type change while any record
 * (trashed ones too, which a restore would bring back) holds a value for the key; dropping choice
 * options records hold; a field becoming required while live records lack a value. Removed fields
 * need no check: their values are dropped from the records (see dropRemovedValues).
 */
async function assertFieldChangesFit(
  db: Executor,
  orgId: string,
  objectId: string,
  before: readonly CustomFieldDef[],
  after: readonly CustomFieldDef[],
): Promise<void> {
  const previous = new Map(before.map((f) => [f.key, f]));
  for (const [index, field] of after.entries()) {
    const path = `fields.${index}`;
    const old = previous.get(field.key);
    if (old && old.type !== field.type) {
      const n = await countRecords(db, orgId, objectId, holdsValue(field.key), false);
      if (n > 0) {
        throw conflictOn(
          `${path}.type`,
          `Field "${field.key}" cannot change type from ${old.type} to ${field.type}: ${n} record(s) (trashed ones included) hold a value for it. Clear those values first, or add a new field.`,
          'type_change_with_values',
        );
      }
    }
    if (old && old.type === 'choice' && field.type === 'choice') {
      const kept = new Set(field.options ?? []);
      const dropped = (old.options ?? []).filter((o) => !kept.has(o));
      if (dropped.length > 0) {
        const n = await countRecords(
          db,
          orgId,
          objectId,
          inArray(sql`${customObjectRecords.values} ->> ${field.key}`, dropped),
          false,
        );
        if (n > 0) {
          throw conflictOn(
            `${path}.options`,
            `Field "${field.key}" cannot drop option(s) ${dropped.map((o) => `"${o}"`).join(', ')}: ${n} record(s) (trashed ones included) hold them. Change those records first.`,
            'option_in_use',
          );
        }
      }
    }
    if (field.required && !(old?.required ?? false)) {
      const n = await countRecords(db, orgId, objectId, lacksValue(field.key), true);
      if (n > 0) {
        throw conflictOn(
          `${path}.required`,
          `Field "${field.key}" cannot become required: ${n} live record(s) have no value for it. Fill them in first, or add the field as optional.`,
          'required_field_missing_values',
        );
      }
    }
  }
}

/** Removing a field removes its data, as in Close: the key is dropped from every record of the object. */
async function dropRemovedValues(
  db: Executor,
  orgId: string,
  objectId: string,
  before: readonly CustomFieldDef[],
  after: readonly CustomFieldDef[],
): Promise<void> {
  const kept = new Set(after.map((f) => f.key));
  const removed = before.map((f) => f.key).filter((k) => !kept.has(k));
  if (removed.length === 0) return;
  await db
    .update(customObjectRecords)
    .set({ values: sql`${customObjectRecords.values} - ${textArray(removed)}` })
    .where(
      and(
        eq(customObjectRecords.orgId, orgId),
        eq(customObjectRecords.objectId, objectId),
        sql`${customObjectRecords.values} ?| ${textArray(removed)}`,
      ),
    );
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

/** Whether two value maps hold the same entries; field values are scalars (or null), so === compares them. */
function sameValues(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/** Brings a trashed record back; a gone or deactivated owner is replaced by the restoring user, as for leads. */
async function restoreRecord(ctx: TrashContext, id: string): Promise<RecordOut> {
  const [before] = await ctx.db
    .select()
    .from(customObjectRecords)
    .where(
      and(
        eq(customObjectRecords.id, id),
        eq(customObjectRecords.orgId, ctx.auth.orgId),
        isNotNull(customObjectRecords.deletedAt),
      ),
    )
    .limit(1)
    .for('update');
  if (!before) throw notFound('Trash item');
  let ownerId = before.ownerId;
  if (ownerId === null || !(await isAssignableUser(ctx.db, ctx.auth.orgId, ownerId))) {
    ownerId = ctx.auth.userId;
  }
  const [row] = await ctx.db
    .update(customObjectRecords)
    .set({ deletedAt: null, deletedBy: null, ownerId, updatedAt: ctx.now })
    .where(and(eq(customObjectRecords.id, before.id), eq(customObjectRecords.orgId, ctx.auth.orgId)))
    .returning();
  if (!row) throw notFound('Trash item');
  return serializeRecord(row);
}

// ---------------------------------------------------------------------------------------------
// Definition tools

type CustomObjectPermission = Extract<
  Permission,
  `custom_objects.${string}` | 'settings.custom_objects.manage'
>;

const access = (kind: 'read' | 'write', permission: CustomObjectPermission) =>
  ({ kind, resource: 'custom_objects', permission, feature: 'custom_objects' }) as const;

const objectOutput = z.object({ custom_object: customObjectSchema });
const recordOutput = z.object({ record: recordSchema });

const OBJECT_SORT_FIELDS = ['name', 'created_at', 'updated_at'] as const;
const RECORD_SORT_FIELDS = ['created_at', 'updated_at'] as const;

export const listCustomObjects = defineTool({
  name: 'list_custom_objects',
  title: 'List custom objects',
  description:
    'Lists the organization\'s custom object definitions (record types such as "Vehicle" or "Contract" with their fields), newest first by default. ' +
    'Use it to learn which custom objects exist and the keys and types of their fields before reading or writing records. ' +
    '`search` matches part of the name. Paginated: returns `custom_objects` plus `total`, `page`, `limit`, `totalPages`; `limit` is 1-100 (default 25).',
  input: z.strictObject(listParams(OBJECT_SORT_FIELDS)),
  output: pagedOutput('custom_objects', customObjectSchema),
  access: access('read', 'custom_objects.view'),
  toolset: TOOLSET,
  async handler(input, { db, auth }) {
    const conditions: SQL[] = [eq(customObjects.orgId, auth.orgId)];
    if (input.search) {
      conditions.push(sql`${customObjects.name} ilike ${`%${escapeLike(input.search)}%`}`);
    }
    const where = and(...conditions);
    const order: SQL[] = [];
    if (input.sort) {
      const descending = input.sort.startsWith('-');
      const field = descending ? input.sort.slice(1) : input.sort;
      const direction = descending ? desc : asc;
      const column =
        field === 'name'
          ? sql`lower(${customObjects.name})`
          : field === 'updated_at'
            ? customObjects.updatedAt
            : customObjects.createdAt;
      order.push(direction(column), direction(customObjects.id));
    } else {
      order.push(desc(customObjects.createdAt), desc(customObjects.id));
    }
    const [totalRow] = await db.select({ n: count() }).from(customObjects).where(where);
    const rows = await db
      .select()
      .from(customObjects)
      .where(where)
      .orderBy(...order)
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('custom_objects', rows.map(serializeObject), totalRow?.n ?? 0, input);
  },
});

export const getCustomObject = defineTool({
  name: 'get_custom_object',
  title: 'Get a custom object',
  description:
    "Returns one custom object definition by id with its fields (key, label, type, required, options). Read it before creating or updating records so the `values` fit the fields. Unknown ids and other organizations' ids answer 404.",
  input: z.strictObject(definitionIdShape),
  output: objectOutput,
  access: access('read', 'custom_objects.view'),
  toolset: TOOLSET,
  async handler(input, { db, auth }) {
    return { custom_object: serializeObject(await getDefinition(db, auth.orgId, input.id)) };
  },
});

export const createCustomObject = defineTool({
  name: 'create_custom_object',
  title: 'Create a custom object',
  errors: [{ code: 'conflict', when: 'another custom object has this name (ignoring case)' }],
  description:
    'Defines a new custom object (a record type of the organization) with its fields. `name` (1-100 characters) must be unique in the organization, ' +
    'case-insensitively (409 otherwise). Each field has a `key` (starts with a letter; letters, digits, underscores), a `label`, a `type` ' +
    '(text, number, date, boolean, choice, user, lead), optional `required` (default false) and, for choice fields, `options`. Needs the settings permission for custom objects (admins and owners).',
  input: z.strictObject({
    name: nameField,
    description: descriptionField.optional(),
    fields: fieldsField,
  }),
  output: objectOutput,
  access: access('write', 'settings.custom_objects.manage'),
  toolset: TOOLSET,
  async handler(input, ctx) {
    await assertNameFree(ctx.db, ctx.auth.orgId, input.name);
    const row = await withNameConflict(async () => {
      const [inserted] = await ctx.db
        .insert(customObjects)
        .values({
          id: newId(ctx.now),
          orgId: ctx.auth.orgId,
          name: input.name,
          description: input.description ?? null,
          fields: toFieldDefs(input.fields),
          createdBy: ctx.auth.userId,
          createdAt: ctx.now,
          updatedAt: ctx.now,
        })
        .returning();
      if (!inserted) throw new Error('insert returned no custom object');
      return inserted;
    });
    return { custom_object: serializeObject(row) };
  },
});

export const updateCustomObject = defineTool({
  name: 'update_custom_object',
  title: 'Update a custom object',
  errors: [
    {
      code: 'conflict',
      when: 'another custom object has this name, or a field change the stored records would no longer satisfy',
    },
  ],
  description:
    'Changes the name, description or fields of a custom object; only what is sent changes. `fields`, when sent, is the complete new field list ' +
    "(fields are matched by `key`; the key of a field cannot be renamed). Removing a field deletes its values from every record of the object. Refused with 409: changing a field's type " +
    'while records hold values for it, dropping choice options that records use, and making a field required (or adding a required field) while live records have no value for it.',
  input: z.strictObject({
    ...definitionIdShape,
    name: nameField.optional(),
    description: descriptionField.optional(),
    fields: fieldsField.optional(),
  }),
  output: objectOutput,
  access: access('write', 'settings.custom_objects.manage'),
  annotations: { idempotentHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const { orgId } = ctx.auth;
    const before = await getDefinition(ctx.db, orgId, input.id, 'update');
    if (input.name !== undefined) await assertNameFree(ctx.db, orgId, input.name, before.id);
    const fields = input.fields === undefined ? before.fields : toFieldDefs(input.fields);
    if (input.fields !== undefined) {
      await assertFieldChangesFit(ctx.db, orgId, before.id, before.fields, fields);
      await dropRemovedValues(ctx.db, orgId, before.id, before.fields, fields);
    }
    const row = await withNameConflict(async () => {
      const [updated] = await ctx.db
        .update(customObjects)
        .set({
          name: input.name ?? before.name,
          description: input.description === undefined ? before.description : input.description,
          fields,
          updatedAt: ctx.now,
        })
        .where(and(eq(customObjects.id, before.id), eq(customObjects.orgId, orgId)))
        .returning();
      if (!updated) throw notFound('Custom object');
      return updated;
    });
    return { custom_object: serializeObject(row) };
  },
});

export const deleteCustomObject = defineTool({
  name: 'delete_custom_object',
  title: 'Delete a custom object',
  errors: [{ code: 'conflict', when: 'the object still has live records (`live_records` says how many)' }],
  description:
    'Deletes a custom object definition for good (definitions do not go to the trash). Refused with 409 while the object has live records: ' +
    'delete or move them first. Records of the object that are in the trash are deleted with it.',
  input: z.strictObject(definitionIdShape),
  output: messageOutput,
  access: access('write', 'settings.custom_objects.manage'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const { orgId } = ctx.auth;
    const before = await getDefinition(ctx.db, orgId, input.id, 'update');
    const live = await countRecords(ctx.db, orgId, before.id, undefined, true);
    if (live > 0) {
      throw new AppError('conflict', {
        message: `Custom object "${before.name}" still has ${live} live record(s); delete them before deleting the object`,
        extra: { live_records: live },
      });
    }
    // Trashed records go with it through the foreign key's ON DELETE CASCADE.
    await ctx.db
      .delete(customObjects)
      .where(and(eq(customObjects.id, before.id), eq(customObjects.orgId, orgId)));
    return { message: 'Custom object deleted' };
  },
});

// ---------------------------------------------------------------------------------------------
// Record tools

export const listCustomObjectRecords = defineTool({
  name: 'list_custom_object_records',
  title: 'List custom object records',
  description:
    'Lists the live records of one custom object, newest first by default (sort by created_at or updated_at). Filter by `owner_id`; ' +
    '`search` finds records whose text fields contain the given text (case-insensitive). Paginated: returns `records` plus `total`, `page`, ' +
    '`limit`, `totalPages`; request page 1, then increment `page` until page >= totalPages. `limit` is 1-100 (default 25).',
  input: z.strictObject({
    ...objectPathShape,
    ...listParams(RECORD_SORT_FIELDS),
    owner_id: objectId('owner user').optional().describe('Only records owned by this user'),
  }),
  output: pagedOutput('records', recordSchema),
  access: access('read', 'custom_objects.view'),
  toolset: TOOLSET,
  async handler(input, { db, auth }) {
    const definition = await getDefinition(db, auth.orgId, input.objectId);
    const conditions: SQL[] = [
      eq(customObjectRecords.orgId, auth.orgId),
      eq(customObjectRecords.objectId, definition.id),
      isNull(customObjectRecords.deletedAt),
    ];
    if (input.owner_id) conditions.push(eq(customObjectRecords.ownerId, input.owner_id));
    if (input.search !== undefined) {
      // Only the text fields' values are searched: keys and other types would match by accident.
      const textKeys = definition.fields.filter((f) => f.type === 'text').map((f) => f.key);
      if (textKeys.length === 0) return paged('records', [], 0, input);
      const pattern = `%${escapeLike(input.search)}%`;
      conditions.push(
        sql`exists (select 1 from jsonb_each_text(${customObjectRecords.values}) as v(key, value) where v.key = any(${textArray(textKeys)}) and v.value ilike ${pattern})`,
      );
    }
    const where = and(...conditions);
    const descending = input.sort === undefined || input.sort.startsWith('-');
    const direction = descending ? desc : asc;
    const column = input.sort?.endsWith('updated_at')
      ? customObjectRecords.updatedAt
      : customObjectRecords.createdAt;
    const [totalRow] = await db.select({ n: count() }).from(customObjectRecords).where(where);
    const rows = await db
      .select()
      .from(customObjectRecords)
      .where(where)
      .orderBy(direction(column), direction(customObjectRecords.id))
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('records', rows.map(serializeRecord), totalRow?.n ?? 0, input);
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
    const definition = await getDefinition(db, auth.orgId, input.objectId);
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
    const definition = await getDefinition(ctx.db, orgId, input.objectId, 'share');
    const checked = await validateCustomValues(ctx.db, orgId, definition.fields, input.values, {
      partial: false,
      pathPrefix: 'values',
    });
    if (checked.errors.length > 0) throw validationError(checked.errors);
    const ownerId = input.owner_id ?? userId;
    if (input.owner_id !== undefined) await assertAssignableOwner(ctx.db, orgId, ownerId);
    const [row] = await ctx.db
      .insert(customObjectRecords)
      .values({
        id: newId(ctx.now),
        orgId,
        objectId: definition.id,
        values: checked.values,
        ownerId,
        createdBy: userId,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
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
    const definition = await getDefinition(ctx.db, orgId, input.objectId, 'share');
    const before = await getLiveRecord(ctx.db, orgId, definition.id, input.recordId, true);
    const values =
      input.values === undefined
        ? before.values
        : await mergeValues(ctx.db, orgId, definition.fields, before.values, input.values);
    if (input.owner_id !== undefined && input.owner_id !== before.ownerId) {
      await assertAssignableOwner(ctx.db, orgId, input.owner_id);
    }
    const ownerId = input.owner_id ?? before.ownerId;
    // Nothing to change: keep updated_at, so sync clients do not see a phantom modification.
    if (ownerId === before.ownerId && sameValues(values, before.values))
      return { record: serializeRecord(before) };
    const [row] = await ctx.db
      .update(customObjectRecords)
      .set({ values, ownerId, updatedAt: ctx.now })
      .where(and(eq(customObjectRecords.id, before.id), eq(customObjectRecords.orgId, orgId)))
      .returning();
    if (!row) throw notFound('Custom object record');
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
    const definition = await getDefinition(ctx.db, orgId, input.objectId);
    const before = await getLiveRecord(ctx.db, orgId, definition.id, input.recordId, true);
    await ctx.db
      .update(customObjectRecords)
      .set({ deletedAt: ctx.now, deletedBy: ctx.auth.userId })
      .where(and(eq(customObjectRecords.id, before.id), eq(customObjectRecords.orgId, orgId)));
    return { message: 'Custom object record moved to the trash' };
  },
});

export const customObjectTools: Tool[] = [
  listCustomObjects,
  getCustomObject,
  createCustomObject,
  updateCustomObject,
  deleteCustomObject,
  listCustomObjectRecords,
  getCustomObjectRecord,
  createCustomObjectRecord,
  updateCustomObjectRecord,
  deleteCustomObjectRecord,
];

// ---------------------------------------------------------------------------------------------
// Registries

/**
 * The record entry of the trash registry. Records have no name column, so the trash lists a
 * record by its id (`name` = `_id`); definitions are deleted for good and never in the trash.
 */
export const customObjectRecordTrashTypes: readonly TrashType[] = [
  {
    type: 'custom_object_record',
    recordKey: 'record',
    resource: 'custom_objects',
    schema: recordSchema,
    table: customObjectRecords,
    columns: {
      id: customObjectRecords.id,
      orgId: customObjectRecords.orgId,
      // No name column: the object's name and its first non-empty value by key, e.g. "Vehicle: VW Golf".
      name: sql`(select ${customObjects.name} from ${customObjects} where ${customObjects.id} = ${customObjectRecords.objectId}) || coalesce(': ' || left((select v.value from jsonb_each_text(${customObjectRecords.values}) as v where v.value <> '' order by v.key limit 1), 80), '')`,
      deletedAt: customObjectRecords.deletedAt,
      deletedBy: customObjectRecords.deletedBy,
    },
    restore: restoreRecord,
  },
];

/** Records follow their owner's deletion like leads; there are no custom-object events to announce it with. */
export const customObjectRecordOwnership: readonly OwnedRecordTable[] = [
  {
    name: 'custom_object_records',
    table: customObjectRecords,
    orgId: customObjectRecords.orgId,
    ownerId: customObjectRecords.ownerId,
    deletedAt: customObjectRecords.deletedAt,
    deletedBy: customObjectRecords.deletedBy,
    updatedAt: customObjectRecords.updatedAt,
    async announce() {},
  },
];
