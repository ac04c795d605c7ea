// Rows of tools/activities written straight to its table, for what its routes cannot make: backdated, trashed
// or raw field values (hostile strings) the activity routes cannot produce. Tests of other areas seed through
// here instead of importing this area's tables (test/README.md, "Fixtures").
import { newId } from '../../core/ids.ts';
import { activities } from '../../tools/activities/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** A row of the table: the organization comes from the call, the id is new unless given. */
export type ActivitySeed = Omit<typeof activities.$inferInsert, 'id' | 'orgId'> & { id?: string };

/** Activity rows of one organization, inserted in one statement; their ids, in order. */
export async function seedActivities(t: TestContext, orgId: string, rows: ActivitySeed[]): Promise<string[]> {
  const values = rows.map((row) => ({ id: newId(), ...row, orgId }));
  await t.services.db.system.insert(activities).values(values);
  return values.map((row) => row.id);
}
