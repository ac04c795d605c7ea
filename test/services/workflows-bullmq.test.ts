// Locks in workflow steps on PostgreSQL with Redis: the 'workflow.step' jobs run through BullMQ at
// their time, each step waking the next, and the enrollment completes with each step run once.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { tasks } from '../../tools/tasks/tables.ts';
import { sweepDueEnrollments } from '../../tools/workflows/steps-runner.ts';
import { workflowStepRuns } from '../../tools/workflows/tables.ts';
import {
  createLeadWithContact,
  createTestContext,
  createWorkflow,
  enrollLeadIn,
  enrollmentRow,
  fileTest,
  onPostgres,
} from '../fixtures/index.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `crmtest-workflows-${randomBytes(4).toString('hex')}`;

// The file's context runs its workers on BullMQ under a prefix of its own; its keys go after it closes.
const test = fileTest();
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the context has none.
test.override('t', { scope: 'file' }, async ({}, { onCleanup }) => {
  const t = await createTestContext(
    { REDIS_URL },
    { withoutRateLimits: true, withWorkers: true, queue: { prefix: PREFIX } },
  );
  onCleanup(async () => {
    await t.close();
    const cleanup = new Redis(REDIS_URL);
    const keys = await cleanup.keys(`${PREFIX}*`);
    if (keys.length > 0) await cleanup.del(...keys);
    cleanup.disconnect();
  });
  return t;
});

/** Polls until `done` holds; gives up after 20 seconds. */
async function until(done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the condition never held');
}

describe.runIf(onPostgres)('workflow steps through BullMQ', () => {
  test('runs each step once at its time and completes the enrollment', async ({ t, org }) => {
    expect(t.services.jobs.kind).toBe('bullmq');
    const workflow = await createWorkflow(t, org, {
      steps: [
        { type: 'task', delay: { amount: 0, unit: 'minutes' }, text: 'First call' },
        { type: 'task', delay: { amount: 0, unit: 'minutes' }, text: 'Second call' },
      ],
    });
    const { leadId } = await createLeadWithContact(t, org);
    const enrollment = await enrollLeadIn(t, org, workflow._id, { lead_id: leadId });
    await until(async () => (await enrollmentRow(t, enrollment._id)).status === 'completed');
    const made = await t.services.db.system.select().from(tasks).where(eq(tasks.leadId, leadId));
    expect(made.map((task) => task.text).sort()).toEqual(['First call', 'Second call']);
    const runs = await t.services.db.system
      .select()
      .from(workflowStepRuns)
      .where(eq(workflowStepRuns.enrollmentId, enrollment._id));
    expect(runs.map((run) => run.stepIndex).sort()).toEqual([0, 1]);
    // Nothing is left for the sweeper to wake.
    expect(await sweepDueEnrollments(t.services, 0)).toBe(0);
  });
});
