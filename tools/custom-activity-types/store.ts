// The custom activity types store: the type's record shape, its settings table on the record
// helper (deleted for good, never trashed; the name is unique ignoring case, a clash is a 409),
// creating, changing and deleting a type. What that does to the records of the type (removed
// fields' values are erased, a field is not retyped while records hold values, live records block
// the deletion and trashed ones are purged with it) is decided by the area holding them, through
// the hooks the area is built with (core/area.ts CustomActivityTypeChangingHook, tools/activities).
import { and, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import type { CustomActivityTypeChangingHook } from '../../core/area.ts';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { AppError } from '../../core/errors.ts';
import { auditFields, auditValues, defineSettingsTable, newRecordStamp } from '../../core/records.ts';
import type { ToolContext } from '../../core/tool.ts';
import type { CustomFieldDef } from '../custom-objects/fields.ts';
import { changedFieldTypes, customFieldDefOutput } from '../custom-objects/fields.ts';
import { type CustomActivityTypeRow, customActivityTypes } from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Record shape

export const customActivityTypeSchema = z
  .object({
    _id: z
      .string()
      .describe(
        'Custom activity type id (24 hex characters); pass it as custom_activity_type_id to log_activity',
      ),
    name: z.string().describe('Name of the activity type, unique in the organization (case-insensitive)'),
    description: z.string().nullable().describe('What the type is for, or null'),
    fields: z
      .array(customFieldDefOutput)
      .describe('The fields an activity of this type carries in `values`, keyed by each field `key`'),
    ...auditFields('type'),
  })
  .describe('A custom activity type: a named kind of activity with its own field definitions');
export type CustomActivityTypeRecord = z.output<typeof customActivityTypeSchema>;

export function serializeCustomActivityType(row: CustomActivityTypeRow): CustomActivityTypeRecord {
  return {
    _id: row.id,
    name: row.name,
    description: row.description,
    fields: row.fields.map((f) => ({
      key: f.key,
      label: f.label,
      type: f.type,
      required: f.required === true,
      ...(f.options !== undefined ? { options: f.options } : {}),
    })),
    ...auditValues(row),
  };
}

// ---------------------------------------------------------------------------------------------
// Data functions

/** The custom activity types table on the record helper (a settings table: deleted for good, never trashed). */
export const customActivityTypeTable = defineSettingsTable<CustomActivityTypeRow>({
  label: 'Custom activity type',
  table: customActivityTypes,
  select: (db) => db.select().from(customActivityTypes).$dynamic(),
  update: (db, set, where) => db.update(customActivityTypes).set(set).where(where).returning(),
});

function nameTaken(name: string): AppError {
  return new AppError('conflict', {
    message: `A custom activity type named "${name}" already exists (names are compared ignoring case)`,
  });
}

/** Runs a write that may hit the case-insensitive name index in a savepoint, turning a clash into a 409. */
async function withNameCheck<T>(
  ctx: Pick<ToolContext, 'db'>,
  name: string,
  fn: (db: Executor) => Promise<T>,
) {
  try {
    return await ctx.db.transaction(fn);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(name);
    throw err;
  }
}

type TypeContext = Pick<ToolContext, 'db' | 'auth' | 'now'>;

export interface TypeState {
  name: string;
  description: string | null;
  fields: CustomFieldDef[];
}

/** A new type; a taken name is a 409. */
export async function insertCustomActivityType(
  ctx: TypeContext,
  input: TypeState,
): Promise<CustomActivityTypeRecord> {
  const row = await withNameCheck(ctx, input.name, async (db) => {
    const [inserted] = await db
      .insert(customActivityTypes)
      .values({
        ...newRecordStamp(ctx),
        name: input.name,
        description: input.description,
        fields: input.fields,
      })
      .returning();
    return inserted;
  });
  if (!row) throw new Error('insert returned no custom activity type');
  return serializeCustomActivityType(row);
}

/**
 * Writes a new state over a type. Retyping a field is refused while records of the type hold
 * values (the areas holding them decide, `hooks`: tools/activities); removed fields' values are
 * erased from those records.
 */
export async function writeCustomActivityType(
  ctx: TypeContext,
  before: CustomActivityTypeRow,
  next: TypeState,
  hooks: readonly CustomActivityTypeChangingHook[],
): Promise<CustomActivityTypeRecord> {
  const retyped = changedFieldTypes(before.fields, next.fields);
  if (retyped.length > 0) {
    for (const hook of hooks) await hook.retyping(ctx.db, ctx.auth.orgId, before.id, retyped);
  }
  const row = await withNameCheck(ctx, next.name, (db) =>
    customActivityTypeTable.write(db, ctx.auth.orgId, before.id, { ...next, updatedAt: ctx.now }),
  );
  // Removed fields' values go, so a key later re-added (perhaps with another type) never meets
  // stale values of the old field.
  const kept = new Set(next.fields.map((d) => d.key));
  const removed = before.fields.map((d) => d.key).filter((k) => !kept.has(k));
  if (removed.length > 0) {
    for (const hook of hooks) await hook.fieldsRemoved(ctx.db, ctx.auth.orgId, before.id, removed);
  }
  return serializeCustomActivityType(row);
}

/**
 * Deletes a type for good, refused while live records use it; its trashed records go with it (both
 * decided by the areas holding them, `hooks`).
 */
export async function deleteCustomActivityTypeRow(
  ctx: TypeContext,
  id: string,
  hooks: readonly CustomActivityTypeChangingHook[],
): Promise<void> {
  const before = await customActivityTypeTable.get(ctx.db, ctx.auth.orgId, id, 'update');
  for (const hook of hooks) await hook.deleting(ctx.db, ctx.auth.orgId, before.id);
  await customActivityTypeTable.remove(ctx.db, ctx.auth.orgId, before.id);
}

/**
 * The field definitions of a type of the organization, or null when it has none by that id: what
 * activities check their values against (tools/activities).
 */
export async function customActivityTypeFields(
  db: Executor,
  orgId: string,
  typeId: string,
): Promise<CustomFieldDef[] | null> {
  const [type] = await db
    .select({ fields: customActivityTypes.fields })
    .from(customActivityTypes)
    .where(and(eq(customActivityTypes.id, typeId), eq(customActivityTypes.orgId, orgId)))
    .limit(1);
  return type?.fields ?? null;
}

/** Of `ids`, the ones that are custom activity types of the organization (tools/smart-views filters). */
export async function existingCustomActivityTypeIds(
  db: Executor,
  orgId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: customActivityTypes.id })
    .from(customActivityTypes)
    .where(and(eq(customActivityTypes.orgId, orgId), inArray(customActivityTypes.id, [...ids])));
  return new Set(rows.map((r) => r.id));
}
