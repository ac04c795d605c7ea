// Rows of tools/custom-activity-types written straight to its table, for what its routes cannot make: types
// of a plan or organization the routes would refuse, or raw definitions. Tests of other areas seed through
// here instead of importing this area's tables (test/README.md, "Fixtures").
import { newId } from '../../core/ids.ts';
import { customActivityTypes } from '../../tools/custom-activity-types/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** A row of the table: the organization comes from the call, the id is new unless given. */
export type CustomActivityTypeSeed = Omit<typeof customActivityTypes.$inferInsert, 'id' | 'orgId'> & {
  id?: string;
};

/** Custom activity type rows of one organization, inserted in one statement; their ids, in order. */
export async function seedCustomActivityTypes(
  t: TestContext,
  orgId: string,
  rows: CustomActivityTypeSeed[],
): Promise<string[]> {
  const values = rows.map((row) => ({ id: newId(), ...row, orgId }));
  await t.services.db.system.insert(customActivityTypes).values(values);
  return values.map((row) => row.id);
}
