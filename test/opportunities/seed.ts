// Rows of tools/opportunities written straight to its table, for what its routes cannot make: backdated,
// trashed, closed-in-the-past or raw values (hostile strings) the opportunity routes cannot produce. Tests of
// other areas seed through here instead of importing this area's tables (test/README.md, "Fixtures").
import { newId } from '../../core/ids.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** A row of the table: the organization comes from the call, the id is new unless given. */
export type OpportunitySeed = Omit<typeof opportunities.$inferInsert, 'id' | 'orgId'> & { id?: string };

/** Opportunity rows of one organization, inserted in one statement; their ids, in order. */
export async function seedOpportunities(
  t: TestContext,
  orgId: string,
  rows: OpportunitySeed[],
): Promise<string[]> {
  const values = rows.map((row) => ({ id: newId(), ...row, orgId }));
  await t.services.db.system.insert(opportunities).values(values);
  return values.map((row) => row.id);
}
