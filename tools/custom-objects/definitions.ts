// Custom object definitions: record types an organization defines for itself, each naming typed
// fields (rules in fields.ts). Definitions are workspace settings (admins); their records are
// records.ts. A definition change is checked against the records it already has (a type change, a
// dropped choice option, a field becoming required) and removing a field drops its values. The
// specification defines no custom-object events, so nothing here writes to the outbox.
import { and, count, eq, inArray, isNull, ne, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Permission } from '../../core/access.ts';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { AppError } from '../../core/errors.ts';
import {
  auditFields,
  auditValues,
  defineSettingsTable,
  mergePatch,
  newRecordStamp,
  SETTINGS_SORT_FIELDS,
} from '../../core/records.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { customFieldDefOutput, customFieldDefsSchema, toFieldDefs } from './fields.ts';
import { type CustomFieldDef, customObjectRecords, customObjects } from './tables.ts';

export const TOOLSET = 'customization';

// ---------------------------------------------------------------------------------------------
// Record shape

const customObjectSchema = z
  .object({
    _id: z.string().describe('Custom object (definition) id, 24 hex characters'),
    name: z.string().describe('Name of the custom object, unique in the organization (case-insensitively)'),
    description: z.string().nullable().describe('What the object is for, or null'),
    fields: z.array(customFieldDefOutput).describe('The fields its records hold, in display order'),
    ...auditFields('definition'),
  })
  .describe('A custom object definition: a named record type with typed fields');
type CustomObjectOut = z.output<typeof customObjectSchema>;

type DefinitionRow = typeof customObjects.$inferSelect;

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
    ...auditValues(row),
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
const definitionIdShape = { id: objectId('custom object') };

// ---------------------------------------------------------------------------------------------
// Data functions

/**
 * The definitions table on the record helper (a settings table: deleted for good, never trashed).
 * `get` takes a row lock when asked: `update` while the definition changes, `share` while a record
 * is written against it, so a record cannot slip past a rule (a new required field) that a
 * concurrent definition change is checking.
 */
export const definitionTable = defineSettingsTable<DefinitionRow>({
  label: 'Custom object',
  table: customObjects,
  select: (db) => db.select().from(customObjects).$dynamic(),
  update: (db, set, where) => db.update(customObjects).set(set).where(where).returning(),
});

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
export function textArray(items: readonly string[]): SQL {
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

// ---------------------------------------------------------------------------------------------
// Tools

type CustomObjectPermission = Extract<
  Permission,
  `custom_objects.${string}` | 'settings.custom_objects.manage'
>;

export const access = (kind: 'read' | 'write', permission: CustomObjectPermission) =>
  ({ kind, resource: 'custom_objects', permission, feature: 'custom_objects' }) as const;

const objectOutput = z.object({ custom_object: customObjectSchema });

export const listCustomObjects = defineTool({
  name: 'list_custom_objects',
  title: 'List custom objects',
  description:
    'Lists the organization\'s custom object definitions (record types such as "Vehicle") with their fields. Use it to learn the objects and their field keys and types before reading or writing records. `search` matches part of the name.',
  input: z.strictObject(listParams(SETTINGS_SORT_FIELDS)),
  output: pagedOutput('custom_objects', customObjectSchema),
  access: access('read', 'custom_objects.view'),
  toolset: TOOLSET,
  async handler(input, { db, auth }) {
    return definitionTable.list(db, 'custom_objects', serializeObject, auth.orgId, input);
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
    return { custom_object: serializeObject(await definitionTable.get(db, auth.orgId, input.id)) };
  },
});

export const createCustomObject = defineTool({
  name: 'create_custom_object',
  title: 'Create a custom object',
  errors: [{ code: 'conflict', when: 'another custom object has this name (ignoring case)' }],
  description:
    'Defines a custom object type (a record type of the organization, e.g. properties or vehicles) with its fields. The name is unique in the organization ignoring case (409). Needs the custom objects settings permission (admins and owners).',
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
          ...newRecordStamp(ctx),
          name: input.name,
          description: input.description ?? null,
          fields: toFieldDefs(input.fields),
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
    "Changes the name, description or fields of a custom object; only what is sent changes. `fields` is the complete new list, matched by `key` (keys cannot be renamed); removing a field deletes its values. 409: changing a field's type while records hold values, dropping choice options in use, or making a field required while live records lack a value.",
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
    const before = await definitionTable.get(ctx.db, orgId, input.id, 'update');
    if (input.name !== undefined) await assertNameFree(ctx.db, orgId, input.name, before.id);
    const next = mergePatch(
      { name: before.name, description: before.description, fields: before.fields },
      { name: input.name, description: input.description, fields: input.fields && toFieldDefs(input.fields) },
    );
    if (input.fields !== undefined) {
      await assertFieldChangesFit(ctx.db, orgId, before.id, before.fields, next.fields);
      await dropRemovedValues(ctx.db, orgId, before.id, before.fields, next.fields);
    }
    const row = await withNameConflict(() =>
      definitionTable.write(ctx.db, orgId, before.id, { ...next, updatedAt: ctx.now }),
    );
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
    const before = await definitionTable.get(ctx.db, orgId, input.id, 'update');
    const live = await countRecords(ctx.db, orgId, before.id, undefined, true);
    if (live > 0) {
      throw new AppError('conflict', {
        message: `Custom object "${before.name}" still has ${live} live record(s); delete them before deleting the object`,
        extra: { live_records: live },
      });
    }
    // Trashed records go with it through the foreign key's ON DELETE CASCADE.
    await definitionTable.remove(ctx.db, orgId, before.id);
    return { message: 'Custom object deleted' };
  },
});

export const definitionTools = [
  listCustomObjects,
  getCustomObject,
  createCustomObject,
  updateCustomObject,
  deleteCustomObject,
];
