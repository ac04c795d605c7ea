// The custom activity types store: the type's record shape, its settings table on the record
// helper (deleted for good, never trashed; the name is unique ignoring case, a clash is a 409),
// creating, changing and deleting a type, and what that does to the activities of the type:
// removed fields' values are erased, a field is not retyped while activities hold values, live
// activities block the deletion and trashed ones are purged with it.
import { and, count, eq, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { AppError } from '../../core/errors.ts';
import { auditFields, auditValues, defineSettingsTable, newRecordStamp } from '../../core/records.ts';
import type { ToolContext } from '../../core/tool.ts';
import { activities } from '../activities/tables.ts';
import { changedFieldTypes, customFieldDefOutput } from '../custom-objects/fields.ts';
import type { CustomFieldDef } from '../custom-objects/tables.ts';
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

/** Activities of the type: live ones, or every one including the trashed when `includeTrashed`. */
async function countActivitiesOfType(
  db: Executor,
  orgId: string,
  typeId: string,
  includeTrashed: boolean,
): Promise<number> {
  const conditions: SQL[] = [eq(activities.orgId, orgId), eq(activities.customActivityTypeId, typeId)];
  if (!includeTrashed) conditions.push(isNull(activities.deletedAt));
  const [row] = await db
    .select({ n: count() })
    .from(activities)
    .where(and(...conditions));
  return row?.n ?? 0;
}

/**
 * Drops the values of removed fields from the type's activities, so a key later re-added (perhaps
 * with another type) never meets stale values of the old field.
 */
async function dropRemovedValues(
  db: Executor,
  orgId: string,
  typeId: string,
  before: readonly CustomFieldDef[],
  after: readonly CustomFieldDef[],
): Promise<void> {
  const kept = new Set(after.map((d) => d.key));
  const removed = before.map((d) => d.key).filter((k) => !kept.has(k));
  if (removed.length === 0) return;
  // jsonb `-` one key at a time, each key a bound parameter.
  const stripped = removed.reduce<SQL>((acc, key) => sql`(${acc}) - ${key}::text`, sql`${activities.fields}`);
  await db
    .update(activities)
    .set({ fields: stripped })
    .where(and(eq(activities.orgId, orgId), eq(activities.customActivityTypeId, typeId)));
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
 * Writes a new state over a type. Retyping a field is refused while any activity (even a trashed
 * one) holds values of the type; removed fields' values are erased from its activities.
 */
export async function writeCustomActivityType(
  ctx: TypeContext,
  before: CustomActivityTypeRow,
  next: TypeState,
): Promise<CustomActivityTypeRecord> {
  const retyped = changedFieldTypes(before.fields, next.fields);
  if (retyped.length > 0 && (await countActivitiesOfType(ctx.db, ctx.auth.orgId, before.id, true)) > 0) {
    throw new AppError('conflict', {
      message: `Cannot change the type of field(s) ${retyped.join(', ')}: activities of this type already hold values for them. Add a new field instead.`,
    });
  }
  const row = await withNameCheck(ctx, next.name, (db) =>
    customActivityTypeTable.write(db, ctx.auth.orgId, before.id, { ...next, updatedAt: ctx.now }),
  );
  await dropRemovedValues(ctx.db, ctx.auth.orgId, before.id, before.fields, next.fields);
  return serializeCustomActivityType(row);
}

/** Deletes a type for good, refused while live activities use it; its trashed activities go with it. */
export async function deleteCustomActivityTypeRow(ctx: TypeContext, id: string): Promise<void> {
  const before = await customActivityTypeTable.get(ctx.db, ctx.auth.orgId, id, 'update');
  const live = await countActivitiesOfType(ctx.db, ctx.auth.orgId, before.id, false);
  if (live > 0) {
    throw new AppError('conflict', {
      message: `${live} activit${live === 1 ? 'y uses' : 'ies use'} this custom activity type; delete them before the type`,
    });
  }
  await ctx.db
    .delete(activities)
    .where(
      and(
        eq(activities.orgId, ctx.auth.orgId),
        eq(activities.customActivityTypeId, before.id),
        isNotNull(activities.deletedAt),
      ),
    );
  await customActivityTypeTable.remove(ctx.db, ctx.auth.orgId, before.id);
}
