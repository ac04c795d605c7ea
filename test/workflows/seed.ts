// Rows of tools/workflows written straight to its table, for what its routes cannot make: a workflow
// without steps, or one of an organization whose plan has no workflows, as other areas' tests name
// them (an email's enroll_in_workflow_id). Tests of other areas seed through here instead of importing
// this area's tables (test/README.md, "Fixtures").
import { newId } from '../../core/ids.ts';
import { workflows } from '../../tools/workflows/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** A row of the table: the organization comes from the call, the id is new unless given. */
export type WorkflowSeed = Omit<typeof workflows.$inferInsert, 'id' | 'orgId'> & { id?: string };

/** Workflow rows of one organization, inserted in one statement; their ids, in order. */
export async function seedWorkflows(t: TestContext, orgId: string, rows: WorkflowSeed[]): Promise<string[]> {
  const values = rows.map((row) => ({ id: newId(), ...row, orgId }));
  await t.services.db.system.insert(workflows).values(values);
  return values.map((row) => row.id);
}
