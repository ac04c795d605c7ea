// Locks in the workflow engine with a controllable clock: steps run at their times and in order (an
// email step writes a scheduled email due now for the enrollment, a task step a task with
// task.created, an sms step is recorded skipped), a paused workflow holds its due steps until it is
// activated, unenrolling and deleting stop it, a reply stops it, a step never runs twice, failures
// retry then fail, and the sweeper and a restarted in-process runner pick up a lost wake-up.
import { and, eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { users } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import { SENDER_LEASE } from '../../core/leased-rows.ts';
import { InProcessQueue } from '../../core/queue-in-process.ts';
import type { Services } from '../../core/services.ts';
import { leads } from '../../tools/leads/tables.ts';
import { tasks } from '../../tools/tasks/tables.ts';
import { stopEnrollmentsOnReply } from '../../tools/workflows/replies.ts';
import { runWorkflowStep, sweepDueEnrollments } from '../../tools/workflows/steps-runner.ts';
import { workflowEnrollments, workflowStepRuns, workflows } from '../../tools/workflows/tables.ts';
import { startBackgroundWork } from '../../workers/runtime.ts';
import {
  createLeadWithContact,
  createWorkflow,
  enrollLeadIn,
  enrollmentRow,
  eventsOf,
  fileTest,
  insertConnectedAccountRow,
  readOutput,
  runStepAt,
  scheduledEmailsOf,
  type TestContext,
  type TestOrg,
  WORKFLOW_TOOL,
} from '../fixtures/index.ts';

let accountId: string;

const test = fileTest({ options: { withoutRateLimits: true } });

test.beforeAll(async ({ t, org }) => {
  accountId = await insertConnectedAccountRow(t, org.orgId, org.ownerId);
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const at = (base: Date, ms: number) => new Date(base.getTime() + ms);
const api = (t: TestContext, org: TestOrg, method: string, path: string, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: org.token, body });

const EMAIL = {
  type: 'email',
  delay: { amount: 0, unit: 'minutes' },
  subject: 'Welcome',
  body_html: '<p>Hello</p>',
  body_text: 'Hello',
} as const;
const TASK = {
  type: 'task',
  delay: { amount: 1, unit: 'days' },
  text: 'Call the lead',
  due_in: { amount: 2, unit: 'hours' },
} as const;
const SMS = { type: 'sms', delay: { amount: 3, unit: 'hours' }, body: 'Quick question' } as const;

async function enrolled(t: TestContext, org: TestOrg, steps: unknown[] = [EMAIL, TASK, SMS]) {
  const workflow = await createWorkflow(t, org, { steps: steps as never });
  const lead = await createLeadWithContact(t, org);
  const enrollment = await enrollLeadIn(t, org, workflow._id, { lead_id: lead.leadId });
  const due = new Date(enrollment.next_run_at ?? '');
  return { workflow, lead, enrollment, due };
}

const runsOf = (t: TestContext, enrollmentId: string) =>
  t.services.db.system
    .select()
    .from(workflowStepRuns)
    .where(eq(workflowStepRuns.enrollmentId, enrollmentId))
    .orderBy(workflowStepRuns.stepIndex);

describe('steps at their times', () => {
  test('runs email, task and sms in order, each at its delay, then completes', async ({ t, org }) => {
    const { workflow, lead, enrollment, due } = await enrolled(t, org);
    // Not yet due: nothing happens.
    expect(await runStepAt(t, enrollment._id, at(due, -1))).toBe('skipped');
    expect(await runsOf(t, enrollment._id)).toEqual([]);

    // Step 0, email: a scheduled email due now, through the enrollment's account to the contact.
    expect(await runStepAt(t, enrollment._id, due)).toBe('advanced');
    const [email, ...more] = await scheduledEmailsOf(t, enrollment._id);
    expect(more).toEqual([]);
    expect(email).toMatchObject({
      status: 'scheduled',
      userId: org.ownerId,
      connectedAccountId: accountId,
      leadId: lead.leadId,
      contactId: lead.contactId,
      toAddress: lead.email,
      subject: 'Welcome',
      bodyHtml: '<p>Hello</p>',
      bodyText: 'Hello',
      workflowEnrollmentId: enrollment._id,
      workflowStep: 0,
      scheduledAt: due,
    });
    let row = await enrollmentRow(t, enrollment._id);
    expect(row).toMatchObject({ status: 'active', currentStep: 1, attempts: 0, nextRunAt: at(due, DAY) });

    // Step 1, task, one day later: a task for the enrolling user on the lead, due 2 hours after.
    expect(await runStepAt(t, enrollment._id, at(due, DAY - 1))).toBe('skipped');
    expect(await runStepAt(t, enrollment._id, at(due, DAY))).toBe('advanced');
    const [task] = await t.services.db.system.select().from(tasks).where(eq(tasks.leadId, lead.leadId));
    expect(task).toMatchObject({
      text: 'Call the lead',
      assignedTo: org.ownerId,
      dueAt: at(due, DAY + 2 * HOUR),
    });
    expect((await eventsOf(t, task?.id ?? '', org.orgId)).map((e) => e.event)).toEqual(['task.created']);

    // Step 2, sms, 3 hours later: recorded skipped (no telephony), and the enrollment completes.
    expect(await runStepAt(t, enrollment._id, at(due, DAY + 3 * HOUR))).toBe('completed');
    row = await enrollmentRow(t, enrollment._id);
    expect(row).toMatchObject({ status: 'completed', currentStep: 3, nextRunAt: null });
    expect(row.completedAt).toEqual(at(due, DAY + 3 * HOUR));

    const runs = await runsOf(t, enrollment._id);
    expect(runs.map((r) => [r.stepIndex, r.type, r.status])).toEqual([
      [0, 'email', 'done'],
      [1, 'task', 'done'],
      [2, 'sms', 'skipped'],
    ]);
    expect(runs[0]?.result).toEqual({ scheduled_email_id: email?.id, to: lead.email });
    expect(runs[1]?.result).toEqual({ task_id: task?.id });
    expect(runs[2]?.result).toEqual({ reason: 'telephony is not configured' });

    // The API shows the runs and the counts.
    const got = await readOutput(
      await api(t, org, 'GET', `/workflows/${workflow._id}/enrollments/${enrollment._id}`),
      WORKFLOW_TOOL.get_workflow_enrollment,
    );
    expect(got.enrollment.step_runs.map((r) => r.status)).toEqual(['done', 'done', 'skipped']);
    const counts = await readOutput(
      await api(t, org, 'GET', `/workflows/${workflow._id}`),
      WORKFLOW_TOOL.get_workflow,
    );
    expect(counts.workflow.enrollment_counts).toMatchObject({ active: 0, completed: 1 });
    // Over: a late job does nothing.
    expect(await runStepAt(t, enrollment._id, at(due, 10 * DAY))).toBe('skipped');
  });

  test('runs the steps it began with after the workflow’s steps were shortened and reworded', async ({
    t,
    org,
  }) => {
    const { workflow, lead, enrollment, due } = await enrolled(t, org, [
      TASK,
      { ...TASK, text: 'Second call' },
    ]);
    expect(await runStepAt(t, enrollment._id, due)).toBe('advanced');
    const edit = await api(t, org, 'PATCH', `/workflows/${workflow._id}`, {
      steps: [{ ...TASK, text: 'Edited' }],
    });
    expect(edit.status).toBe(200);
    expect(await runStepAt(t, enrollment._id, at(due, DAY))).toBe('completed');
    expect(await runsOf(t, enrollment._id)).toHaveLength(2);
    const texts = await t.services.db.system
      .select({ text: tasks.text })
      .from(tasks)
      .where(eq(tasks.leadId, lead.leadId))
      .orderBy(tasks.createdAt);
    expect(texts.map((r) => r.text)).toEqual(['Call the lead', 'Second call']);
  });
});

describe('holding and stopping', () => {
  test('holds a due step while the workflow is paused and runs it once activated', async ({ t, org }) => {
    const { workflow, enrollment, due } = await enrolled(t, org, [TASK]);
    await api(t, org, 'POST', `/workflows/${workflow._id}/pause`);
    expect(await runStepAt(t, enrollment._id, at(due, HOUR))).toBe('skipped');
    expect(await enrollmentRow(t, enrollment._id)).toMatchObject({
      currentStep: 0,
      attempts: 0,
      nextRunAt: due,
    });
    // The sweeper leaves a paused workflow's enrollments alone.
    const swept = await sweptIds(t, at(due, HOUR));
    expect(swept).not.toContain(enrollment._id);
    await api(t, org, 'POST', `/workflows/${workflow._id}/activate`);
    expect(await sweptIds(t, at(due, HOUR))).toContain(enrollment._id);
    expect(await runStepAt(t, enrollment._id, at(due, HOUR))).toBe('completed');
  });

  test('hands the claim back when the workflow is paused between the claim and the step', async ({
    t,
    org,
  }) => {
    const { workflow, lead, enrollment, due } = await enrolled(t, org, [TASK]);
    // The pause lands after the claim, before the step's transaction reads the workflow.
    const pausing: Services = {
      ...t.services,
      db: {
        ...t.services.db,
        system: t.services.db.system,
        withTenant: async (orgId, fn) => {
          await t.services.db.system
            .update(workflows)
            .set({ status: 'paused' })
            .where(eq(workflows.id, workflow._id));
          return t.services.db.withTenant(orgId, fn);
        },
      },
    };
    expect(await runWorkflowStepWith(pausing, enrollment._id, due)).toBe('skipped');
    expect(await enrollmentRow(t, enrollment._id)).toMatchObject({
      currentStep: 0,
      attempts: 0,
      nextRunAt: due,
    });
    expect(await t.services.db.system.select().from(tasks).where(eq(tasks.leadId, lead.leadId))).toEqual([]);
    await api(t, org, 'POST', `/workflows/${workflow._id}/activate`);
    expect(await runStepAt(t, enrollment._id, due)).toBe('completed');
  });

  test('runs nothing after unenrolling or deleting the workflow', async ({ t, org }) => {
    const a = await enrolled(t, org, [TASK]);
    await api(t, org, 'DELETE', `/workflows/${a.workflow._id}/enrollments/${a.enrollment._id}`);
    expect(await runStepAt(t, a.enrollment._id, a.due)).toBe('skipped');
    const b = await enrolled(t, org, [TASK]);
    await api(t, org, 'DELETE', `/workflows/${b.workflow._id}`);
    expect(await runStepAt(t, b.enrollment._id, b.due)).toBe('skipped');
    expect([...(await runsOf(t, a.enrollment._id)), ...(await runsOf(t, b.enrollment._id))]).toEqual([]);
  });

  test('stops on a reply from the enrolled contact’s address, or to an email the enrollment sent', async ({
    t,
    org,
  }) => {
    const a = await enrolled(t, org, [EMAIL, TASK]);
    const b = await enrolled(t, org, [EMAIL, TASK]);
    const hookContext = { db: t.services.db.system, orgId: org.orgId, now: new Date(), services: t.services };
    const facts = {
      inboundEmailId: newId(),
      connectedAccountId: accountId,
      accountUserId: org.ownerId,
      leadId: a.lead.leadId,
      contactId: a.lead.contactId,
      fromAddress: a.lead.email.toUpperCase(),
      messageId: '<reply-1@prospect.test>',
      inReplyTo: null,
      repliesToEmailId: null,
      receivedAt: new Date(),
    };
    await stopEnrollmentsOnReply({ ...hookContext, emit: async () => {} }, facts);
    expect(await enrollmentRow(t, a.enrollment._id)).toMatchObject({
      status: 'stopped',
      stopReason: 'replied',
    });
    expect((await enrollmentRow(t, b.enrollment._id)).status).toBe('active');

    // b's step sent an email; a reply to it from another address (a colleague) stops b.
    expect(await runStepAt(t, b.enrollment._id, b.due)).toBe('advanced');
    const [sent] = await scheduledEmailsOf(t, b.enrollment._id);
    await stopEnrollmentsOnReply(
      { ...hookContext, emit: async () => {} },
      {
        ...facts,
        fromAddress: 'colleague@elsewhere.test',
        leadId: null,
        contactId: null,
        repliesToEmailId: sent?.id ?? null,
      },
    );
    expect(await enrollmentRow(t, b.enrollment._id)).toMatchObject({
      status: 'stopped',
      stopReason: 'replied',
    });
    expect(await runStepAt(t, b.enrollment._id, at(b.due, DAY))).toBe('skipped');
  });

  test('stops when the lead went to the trash, and fails when the enrolling user was deactivated', async ({
    t,
    org,
  }) => {
    const a = await enrolled(t, org, [TASK]);
    await t.services.db.system
      .update(leads)
      .set({ deletedAt: new Date() })
      .where(eq(leads.id, a.lead.leadId));
    expect(await runStepAt(t, a.enrollment._id, a.due)).toBe('stopped');
    expect(await enrollmentRow(t, a.enrollment._id)).toMatchObject({
      status: 'stopped',
      stopReason: 'lead_deleted',
    });

    const member = await t.createUser(org.orgId, 'member');
    const workflow = await createWorkflow(t, org, { steps: [TASK] });
    const lead = await createLeadWithContact(t, org);
    const enrollment = await enrollLeadIn(t, member, workflow._id, { lead_id: lead.leadId });
    await t.services.db.system.update(users).set({ status: 'inactive' }).where(eq(users.id, member.userId));
    expect(await runStepAt(t, enrollment._id, new Date(enrollment.next_run_at ?? ''))).toBe('failed');
    const row = await enrollmentRow(t, enrollment._id);
    expect(row.status).toBe('failed');
    expect(row.stopReason).toContain('no longer an active user');
    // Nothing of the step stays: its run row rolled back with it.
    expect(await runsOf(t, enrollment._id)).toEqual([]);
  });
});

describe('exactly once', () => {
  test('never runs a step twice when two step jobs race', async ({ t, org }) => {
    const { lead, enrollment, due } = await enrolled(t, org, [TASK, TASK]);
    const outcomes = await Promise.all([
      runStepAt(t, enrollment._id, due),
      runStepAt(t, enrollment._id, due),
    ]);
    expect(outcomes.sort()).toEqual(['advanced', 'skipped']);
    expect(await t.services.db.system.select().from(tasks).where(eq(tasks.leadId, lead.leadId))).toHaveLength(
      1,
    );
    expect(await runsOf(t, enrollment._id)).toHaveLength(1);
  });

  test('the step-run row stops a second run even when a claim was taken over', async ({ t, org }) => {
    const { lead, enrollment, due } = await enrolled(t, org, [TASK, TASK]);
    // A run of step 0 recorded by a runner whose claim then expired without advancing (impossible in
    // one transaction, so this is the last line of defence): the next claim must not run it again.
    await t.services.db.system.insert(workflowStepRuns).values({
      id: newId(),
      orgId: org.orgId,
      enrollmentId: enrollment._id,
      stepIndex: 0,
      type: 'task',
      status: 'done',
    });
    expect(await runStepAt(t, enrollment._id, due)).toBe('skipped');
    expect(await t.services.db.system.select().from(tasks).where(eq(tasks.leadId, lead.leadId))).toEqual([]);
  });

  test('retries a failed attempt after 1 then 5 minutes, then fails the enrollment with the reason', async ({
    t,
    org,
  }) => {
    const { enrollment, due } = await enrolled(t, org, [TASK]);
    // A database that fails every tenant transaction: the claim (system access) works, the step does not.
    const broken: Services = {
      ...t.services,
      db: {
        ...t.services.db,
        system: t.services.db.system,
        withTenant: () => Promise.reject(new Error('connection reset by peer')),
      },
    };
    expect(await runWorkflowStepWith(broken, enrollment._id, due)).toBe('retry');
    expect(await enrollmentRow(t, enrollment._id)).toMatchObject({
      status: 'active',
      attempts: 1,
      lastError: 'connection reset by peer',
      nextRunAt: at(due, MINUTE),
    });
    expect(await runWorkflowStepWith(broken, enrollment._id, at(due, MINUTE - 1))).toBe('skipped');
    expect(await runWorkflowStepWith(broken, enrollment._id, at(due, MINUTE))).toBe('retry');
    expect((await enrollmentRow(t, enrollment._id)).nextRunAt).toEqual(at(due, 6 * MINUTE));
    expect(await runWorkflowStepWith(broken, enrollment._id, at(due, 6 * MINUTE))).toBe('failed');
    expect(await enrollmentRow(t, enrollment._id)).toMatchObject({
      status: 'failed',
      attempts: 3,
      stopReason: 'connection reset by peer',
      nextRunAt: null,
    });
  });

  test('fails an enrollment whose runner died during its last attempt', async ({ t, org }) => {
    const { enrollment, due } = await enrolled(t, org, [TASK]);
    await t.services.db.system
      .update(workflowEnrollments)
      .set({ attempts: 3, nextRunAt: at(due, SENDER_LEASE.leaseMs) })
      .where(eq(workflowEnrollments.id, enrollment._id));
    expect(await runStepAt(t, enrollment._id, at(due, SENDER_LEASE.leaseMs))).toBe('skipped');
    expect(await enrollmentRow(t, enrollment._id)).toMatchObject({
      status: 'failed',
      stopReason: 'the step runner stopped during the last attempt',
    });
  });
});

describe('lost wake-ups', () => {
  test('a restarted in-process runner picks up the due step from the database through the sweeper', async ({
    t,
    org,
  }) => {
    const { lead, enrollment } = await enrolled(t, org, [{ ...TASK, delay: { amount: 0, unit: 'minutes' } }]);
    // The first runner's queue never ran the job (no workers): a restart loses it. A fresh queue, as
    // after `crm serve` restarts, knows nothing of it until the sweeper reads the database.
    const restarted: Services = { ...t.services, jobs: new InProcessQueue(t.services.logger) };
    const work = await startBackgroundWork(restarted, { sweepGraceMs: 0, sweepIntervalMs: 60_000 });
    try {
      const jobs = restarted.jobs;
      if (!(jobs instanceof InProcessQueue)) throw new Error('expected the in-process queue');
      await waitFor(async () => (await enrollmentRow(t, enrollment._id)).status === 'completed', jobs);
    } finally {
      await work.stop();
      await restarted.jobs.close();
    }
    const made = await t.services.db.system
      .select()
      .from(tasks)
      .where(and(eq(tasks.leadId, lead.leadId), eq(tasks.text, 'Call the lead')));
    expect(made).toHaveLength(1);
  });

  test('the sweeper re-wakes due active enrollments past the grace only', async ({ t, org }) => {
    const { enrollment, due } = await enrolled(t, org, [TASK]);
    expect(await sweptIds(t, at(due, -1))).not.toContain(enrollment._id);
    expect(await sweptIds(t, due)).toContain(enrollment._id);
  });
});

// ---------------------------------------------------------------------------------------------

function runWorkflowStepWith(services: Services, id: string, now: Date) {
  return runWorkflowStep(services, id, { now });
}

/** The enrollment ids the sweeper would enqueue at `now` (grace 0), through a recording queue. */
async function sweptIds(t: TestContext, now: Date): Promise<string[]> {
  const ids: string[] = [];
  const recording: Services = {
    ...t.services,
    jobs: {
      ...t.services.jobs,
      enqueueMany: async (_name, jobs) => {
        for (const job of jobs) {
          const payload = job.payload as { enrollmentId: string };
          ids.push(payload.enrollmentId);
        }
      },
    },
  };
  await sweepDueEnrollments(recording, 0, now);
  return ids;
}

/** Polls until `done` holds, letting the queue settle between checks; gives up after 10 seconds. */
async function waitFor(done: () => Promise<boolean>, jobs: InProcessQueue): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    await jobs.idle();
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the condition never held');
}
