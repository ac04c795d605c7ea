// Rows of tools/leads written straight to its table, for what its routes cannot make: backdated, trashed or
// raw values (hostile strings, rows by the hundred for a ranking cap) that the lead routes would refuse,
// normalize or take too long to make. Tests of other areas seed through here instead of importing this area's
// tables (test/README.md, "Fixtures").
import { newId } from '../../core/ids.ts';
import { leads } from '../../tools/leads/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** A row of the table: the organization comes from the call, the id is new unless given. */
export type LeadSeed = Omit<typeof leads.$inferInsert, 'id' | 'orgId'> & { id?: string };

/** Lead rows of one organization, inserted in one statement; their ids, in order. */
export async function seedLeads(t: TestContext, orgId: string, rows: LeadSeed[]): Promise<string[]> {
  const values = rows.map((row) => ({ id: newId(), ...row, orgId }));
  await t.services.db.system.insert(leads).values(values);
  return values.map((row) => row.id);
}
