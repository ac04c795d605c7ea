// Rows of tools/custom-objects written straight to its tables, for what its routes cannot make: trashed
// records and raw values the record routes would validate away. Tests of other areas seed through here
// instead of importing this area's tables (test/README.md, "Fixtures").
import { newId } from '../../core/ids.ts';
import { customObjectRecords, customObjects } from '../../tools/custom-objects/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** A row of a table: the organization comes from the call, the id is new unless given. */
type Seed<Row> = Omit<Row, 'id' | 'orgId'> & { id?: string };

/** A custom object definition of one organization; its id. */
export async function seedCustomObject(
  t: TestContext,
  orgId: string,
  row: Seed<typeof customObjects.$inferInsert>,
): Promise<string> {
  const id = row.id ?? newId();
  await t.services.db.system.insert(customObjects).values({ ...row, id, orgId });
  return id;
}

/** Records of one organization's custom object, inserted in one statement; their ids, in order. */
export async function seedCustomObjectRecords(
  t: TestContext,
  orgId: string,
  rows: Seed<typeof customObjectRecords.$inferInsert>[],
): Promise<string[]> {
  const values = rows.map((row) => ({ id: newId(), ...row, orgId }));
  await t.services.db.system.insert(customObjectRecords).values(values);
  return values.map((row) => row.id);
}
