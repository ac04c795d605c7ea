// Rows of tools/contacts written straight to its table, for what its routes cannot make: trashed rows, raw
// values (hostile strings) or rows under a lead the contact routes would refuse. Tests of other areas seed
// through here instead of importing this area's tables (test/README.md, "Fixtures").
import { newId } from '../../core/ids.ts';
import { contacts } from '../../tools/contacts/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** A row of the table: the organization comes from the call, the id is new unless given. */
export type ContactSeed = Omit<typeof contacts.$inferInsert, 'id' | 'orgId'> & { id?: string };

/** Contact rows of one organization, inserted in one statement; their ids, in order. */
export async function seedContacts(t: TestContext, orgId: string, rows: ContactSeed[]): Promise<string[]> {
  const values = rows.map((row) => ({ id: newId(), ...row, orgId }));
  await t.services.db.system.insert(contacts).values(values);
  return values.map((row) => row.id);
}
