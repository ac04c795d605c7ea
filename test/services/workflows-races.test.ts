// Locks in the workflow races on PostgreSQL, where requests and jobs truly run at once: five parallel
// enrolls of one lead in one workflow give one enrollment (201) and four 409s naming it, and racing
// step jobs run a step once (one task, one step-run row). Each case runs several rounds, because one
// round of a race may happen to run in a harmless order.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { tasks } from '../../tools/tasks/tables.ts';
import { workflowEnrollments, workflowStepRuns } from '../../tools/workflows/tables.ts';
import {
  createLeadWithContact,
  createWorkflow,
  enrollLeadIn,
  fileTest,
  onPostgres,
  readError,
  runStepAt,
} from '../fixtures/index.ts';

const ROUNDS = 6;
const TASK = { type: 'task', delay: { amount: 0, unit: 'minutes' }, text: 'Call the lead' } as const;

const test = fileTest({ options: { withoutRateLimits: true } });

describe.runIf(onPostgres)('workflow races on PostgreSQL', () => {
  test('keeps one active enrollment per lead and workflow under five parallel enrolls', async ({
    t,
    org,
  }) => {
    for (let round = 0; round < ROUNDS; round++) {
      const workflow = await createWorkflow(t, org, {
        steps: [{ ...TASK, delay: { amount: 1, unit: 'days' } }],
      });
      const { leadId } = await createLeadWithContact(t, org);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          t.request('POST', `/api/v1/workflows/${workflow._id}/enrollments`, {
            token: org.token,
            body: { lead_id: leadId },
          }),
        ),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      const rows = await t.services.db.system
        .select()
        .from(workflowEnrollments)
        .where(eq(workflowEnrollments.workflowId, workflow._id));
      expect(rows).toHaveLength(1);
      for (const res of answers.filter((r) => r.status === 409)) {
        expect((await readError(res, 409)).enrollment_id).toBe(rows[0]?.id);
      }
    }
  });

  test('runs a step once when four step jobs race', async ({ t, org }) => {
    for (let round = 0; round < ROUNDS; round++) {
      const workflow = await createWorkflow(t, org, {
        steps: [TASK, { ...TASK, delay: { amount: 1, unit: 'days' } }],
      });
      const { leadId } = await createLeadWithContact(t, org);
      const enrollment = await enrollLeadIn(t, org, workflow._id, { lead_id: leadId });
      const due = new Date(enrollment.next_run_at ?? '');
      const outcomes = await Promise.all(Array.from({ length: 4 }, () => runStepAt(t, enrollment._id, due)));
      expect(outcomes.sort()).toEqual(['advanced', 'skipped', 'skipped', 'skipped']);
      expect(await t.services.db.system.select().from(tasks).where(eq(tasks.leadId, leadId))).toHaveLength(1);
      expect(
        await t.services.db.system
          .select()
          .from(workflowStepRuns)
          .where(eq(workflowStepRuns.enrollmentId, enrollment._id)),
      ).toHaveLength(1);
    }
  });
});
