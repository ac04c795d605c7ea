// What a change of a custom activity type does to the activities of the type, as the hooks the
// custom activity types area is built with (core/area.ts CustomActivityTypeChangingHook): the rules
// about activities stay here, and that area never reads this area's tables.
import { and, count, eq, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';
import type { CustomActivityTypeChangingHook } from '../../core/area.ts';
import type { Executor } from '../../core/db/client.ts';
import { AppError } from '../../core/errors.ts';
import { activities } from './tables.ts';

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

export const activitiesOfCustomType: CustomActivityTypeChangingHook = {
  /** A field is not retyped while any activity (even a trashed one) holds values of the type. */
  async retyping(db, orgId, typeId, retyped) {
    if ((await countActivitiesOfType(db, orgId, typeId, true)) > 0) {
      throw new AppError('conflict', {
        message: `Cannot change the type of field(s) ${retyped.join(', ')}: activities of this type already hold values for them. Add a new field instead.`,
      });
    }
  },
  /** Erases removed fields' values, so a key later re-added never meets stale values of the old field. */
  async fieldsRemoved(db, orgId, typeId, keys) {
    // jsonb `-` one key at a time, each key a bound parameter.
    const stripped = keys.reduce<SQL>((acc, key) => sql`(${acc}) - ${key}::text`, sql`${activities.fields}`);
    await db
      .update(activities)
      .set({ fields: stripped })
      .where(and(eq(activities.orgId, orgId), eq(activities.customActivityTypeId, typeId)));
  },
  /** Live activities block the deletion; trashed ones go with the type (they cannot be shown without it). */
  async deleting(db, orgId, typeId) {
    const live = await countActivitiesOfType(db, orgId, typeId, false);
    if (live > 0) {
      throw new AppError('conflict', {
        message: `${live} activit${live === 1 ? 'y uses' : 'ies use'} this custom activity type; delete them before the type`,
      });
    }
    await db
      .delete(activities)
      .where(
        and(
          eq(activities.orgId, orgId),
          eq(activities.customActivityTypeId, typeId),
          isNotNull(activities.deletedAt),
        ),
      );
  },
};
