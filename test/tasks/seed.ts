// Rows of tools/tasks written straight to its table, for what its routes cannot make: backdated, trashed or
// raw values (hostile strings) the task routes cannot produce. Tests of other areas seed through here instead
// of importing this area's tables (test/README.md, "Fixtures").
import { newId } from '../../core/ids.ts';
import { tasks } from '../../tools/tasks/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** A row of the table: the organization comes from the call, the id is new unless given. */
export type TaskSeed = Omit<typeof tasks.$inferInsert, 'id' | 'orgId'> & { id?: string };

/** Task rows of one organization, inserted in one statement; their ids, in order. */
export async function seedTasks(t: TestContext, orgId: string, rows: TaskSeed[]): Promise<string[]> {
  const values = rows.map((row) => ({ id: newId(), ...row, orgId }));
  await t.services.db.system.insert(tasks).values(values);
  return values.map((row) => row.id);
}
