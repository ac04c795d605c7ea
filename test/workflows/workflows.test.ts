// Locks in workflow definitions and enrollments over REST and MCP: every bound of a step answered
// 400 naming steps.<i>.<field>, merge updates, activate/pause moves, soft delete stopping enrollments,
// the enrollment checks (active workflow, live lead, the lead's contact, the user's own connected
// account), one active enrollment per lead and workflow (also under parallel enrolls), unenroll,
// the MCP preview without confirm, roles and PAT scopes.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { workflowEnrollments, workflows } from '../../tools/workflows/tables.ts';
import {
  createLead,
  createLeadWithContact,
  createWorkflow,
  detailFields,
  enrollLeadIn,
  enrollmentRow,
  eventsOf,
  fileTest,
  insertConnectedAccountRow,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  WORKFLOW_TOOL,
} from '../fixtures/index.ts';

let accountId: string;

const test = fileTest({ options: { withoutRateLimits: true } });

test.beforeAll(async ({ t, org }) => {
  accountId = await insertConnectedAccountRow(t, org.orgId, org.ownerId);
});

const api = (t: TestContext, org: TestOrg, method: string, path: string, body?: unknown, token = org.token) =>
  t.request(method, `/api/v1${path}`, { token, body });

const EMAIL_STEP = {
  type: 'email',
  delay: { amount: 0, unit: 'minutes' },
  subject: 'Hello',
  body_html: '<p>Hi</p>',
} as const;
const TASK_STEP = { type: 'task', delay: { amount: 2, unit: 'days' }, text: 'Call back' } as const;

async function badCreate(t: TestContext, org: TestOrg, body: Record<string, unknown>): Promise<string[]> {
  const res = await api(t, org, 'POST', '/workflows', { name: 'Bad', ...body });
  return detailFields(await readError(res, 400));
}

describe('definitions', () => {
  test('creates a paused workflow by default with its steps as sent, and reads it with enrollment counts', async ({
    t,
    org,
  }) => {
    const res = await api(t, org, 'POST', '/workflows', {
      name: 'Onboarding',
      description: 'Welcome sequence',
      steps: [
        { ...EMAIL_STEP, body_text: 'Hi' },
        { ...TASK_STEP, due_in: { amount: 1, unit: 'hours' } },
        { type: 'sms', delay: { amount: 3, unit: 'hours' }, body: 'Ping' },
      ],
    });
    const { workflow } = await readOutput(res, WORKFLOW_TOOL.create_workflow, 201);
    expect(workflow).toMatchObject({ name: 'Onboarding', status: 'paused', description: 'Welcome sequence' });
    expect(workflow.steps).toEqual([
      { ...EMAIL_STEP, body_text: 'Hi' },
      { ...TASK_STEP, due_in: { amount: 1, unit: 'hours' } },
      { type: 'sms', delay: { amount: 3, unit: 'hours' }, body: 'Ping' },
    ]);
    const got = await readOutput(
      await api(t, org, 'GET', `/workflows/${workflow._id}`),
      WORKFLOW_TOOL.get_workflow,
    );
    expect(got.workflow.enrollment_counts).toEqual({ active: 0, completed: 0, stopped: 0, failed: 0 });
  });

  test('answers 400 naming the field for every bound of a workflow and its steps', async ({ t, org }) => {
    expect(await badCreate(t, org, { name: '', steps: [TASK_STEP] })).toEqual(['name']);
    expect(await badCreate(t, org, { name: 'x'.repeat(201), steps: [TASK_STEP] })).toEqual(['name']);
    expect(await badCreate(t, org, { description: 'x'.repeat(2001), steps: [TASK_STEP] })).toEqual([
      'description',
    ]);
    expect(await badCreate(t, org, { steps: [] })).toEqual(['steps']);
    expect(await badCreate(t, org, { steps: Array.from({ length: 51 }, () => TASK_STEP) })).toEqual([
      'steps',
    ]);
    expect(await badCreate(t, org, { steps: [TASK_STEP], status: 'running' })).toEqual(['status']);
    const step = (s: Record<string, unknown>) => badCreate(t, org, { steps: [TASK_STEP, s] });
    expect(await step({ ...TASK_STEP, delay: { amount: 366, unit: 'days' } })).toEqual([
      'steps.1.delay.amount',
    ]);
    expect(await step({ ...TASK_STEP, delay: { amount: -1, unit: 'minutes' } })).toEqual([
      'steps.1.delay.amount',
    ]);
    expect(await step({ ...TASK_STEP, delay: { amount: 1.5, unit: 'hours' } })).toEqual([
      'steps.1.delay.amount',
    ]);
    expect(await step({ ...TASK_STEP, delay: { amount: 1, unit: 'weeks' } })).toEqual(['steps.1.delay.unit']);
    expect(await step({ type: 'task', text: 'No delay' })).toEqual(['steps.1.delay']);
    expect(await step({ ...TASK_STEP, text: '' })).toEqual(['steps.1.text']);
    expect(await step({ ...TASK_STEP, text: 'x'.repeat(501) })).toEqual(['steps.1.text']);
    expect(await step({ ...TASK_STEP, due_in: { amount: 400, unit: 'days' } })).toEqual([
      'steps.1.due_in.amount',
    ]);
    expect(await step({ ...EMAIL_STEP, subject: '' })).toEqual(['steps.1.subject']);
    expect(await step({ ...EMAIL_STEP, subject: 'x'.repeat(501) })).toEqual(['steps.1.subject']);
    // A subject is a mail header: a CR or LF would end it (docs/security.md "Email").
    expect(await step({ ...EMAIL_STEP, subject: 'Hi\r\nBcc: x@example.com' })).toEqual(['steps.1.subject']);
    expect(await step({ ...EMAIL_STEP, body_html: '' })).toEqual(['steps.1.body_html']);
    expect(await step({ ...EMAIL_STEP, body_html: 'x'.repeat(100_001) })).toEqual(['steps.1.body_html']);
    expect(await step({ type: 'sms', delay: TASK_STEP.delay, body: 'x'.repeat(1601) })).toEqual([
      'steps.1.body',
    ]);
    expect(await step({ type: 'fax', delay: TASK_STEP.delay })).toEqual(['steps.1.type']);
    expect(await step({ ...TASK_STEP, subject: 'not a task field' })).toEqual(['steps.1']);
    // The largest values are accepted.
    const max = await api(t, org, 'POST', '/workflows', {
      name: 'x'.repeat(200),
      steps: [
        { type: 'sms', delay: { amount: 365, unit: 'days' }, body: 'x'.repeat(1600) },
        ...Array.from({ length: 49 }, () => TASK_STEP),
      ],
    });
    expect(max.status).toBe(201);
  });

  test('lists newest first under workflows, filtered by status and name', async ({ t, org, other }) => {
    const paused = await createWorkflow(t, org, { name: 'Zebra follow-up', status: 'paused' });
    const active = await createWorkflow(t, org, { name: 'Zebra welcome' });
    const list = async (query: string) =>
      (
        await readOutput(await api(t, org, 'GET', `/workflows?${query}`), WORKFLOW_TOOL.list_workflows)
      ).workflows.map((w) => w._id);
    expect(await list('search=zebra')).toEqual([active._id, paused._id]);
    expect(await list('search=zebra&status=paused')).toEqual([paused._id]);
    expect(await list('search=zebra&sort=name&limit=1')).toEqual([paused._id]);
    // Another organization sees none of them.
    const theirs = await readOutput(
      await api(t, org, 'GET', '/workflows?search=zebra', undefined, other.token),
      WORKFLOW_TOOL.list_workflows,
    );
    expect(theirs.total).toBe(0);
  });

  test('PATCH and PUT change only the fields sent; steps replace the list; null clears the description', async ({
    t,
    org,
  }) => {
    const w = await createWorkflow(t, org, { description: 'Old' });
    const patched = await readOutput(
      await api(t, org, 'PATCH', `/workflows/${w._id}`, { name: 'Renamed', description: null }),
      WORKFLOW_TOOL.update_workflow,
    );
    expect(patched.workflow).toMatchObject({
      name: 'Renamed',
      description: null,
      status: 'active',
      steps: w.steps,
    });
    const put = await readOutput(
      await api(t, org, 'PUT', `/workflows/${w._id}`, { steps: [EMAIL_STEP], status: 'paused' }),
      WORKFLOW_TOOL.update_workflow,
    );
    expect(put.workflow).toMatchObject({ name: 'Renamed', status: 'paused', steps: [EMAIL_STEP] });
    expect(
      detailFields(await readError(await api(t, org, 'PATCH', `/workflows/${w._id}`, { steps: [] }), 400)),
    ).toEqual(['steps']);
  });

  test('activates and pauses through the machine; repeating a move changes nothing', async ({ t, org }) => {
    const w = await createWorkflow(t, org, { status: 'paused' });
    const move = async (to: 'activate' | 'pause') =>
      (
        await readOutput(
          await api(t, org, 'POST', `/workflows/${w._id}/${to}`),
          WORKFLOW_TOOL.activate_workflow,
        )
      ).workflow.status;
    expect(await move('activate')).toBe('active');
    expect(await move('activate')).toBe('active');
    expect(await move('pause')).toBe('paused');
    expect(await move('pause')).toBe('paused');
  });

  test('deletes softly: gone from reads and lists, its active enrollments stopped with workflow_deleted', async ({
    t,
    org,
  }) => {
    const w = await createWorkflow(t, org);
    const { leadId } = await createLeadWithContact(t, org);
    const enrollment = await enrollLeadIn(t, org, w._id, { lead_id: leadId });
    const res = await api(t, org, 'DELETE', `/workflows/${w._id}`);
    expect(await readOutput(res, WORKFLOW_TOOL.delete_workflow)).toEqual({
      message: 'Workflow deleted; 1 active enrollment(s) stopped',
    });
    expect((await api(t, org, 'GET', `/workflows/${w._id}`)).status).toBe(404);
    expect((await api(t, org, 'DELETE', `/workflows/${w._id}`)).status).toBe(404);
    const row = await enrollmentRow(t, enrollment._id);
    expect(row).toMatchObject({ status: 'stopped', stopReason: 'workflow_deleted', nextRunAt: null });
    const [stored] = await t.services.db.system.select().from(workflows).where(eq(workflows.id, w._id));
    expect(stored?.deletedAt).toBeInstanceOf(Date);
  });
});

describe('enrollments', () => {
  test('enrolls a lead (201, workflow.triggered), lists and reads it, and refuses a second active one (409 naming it)', async ({
    t,
    org,
  }) => {
    const w = await createWorkflow(t, org, { steps: [TASK_STEP] });
    const { leadId, contactId } = await createLeadWithContact(t, org);
    const before = Date.now();
    const enrollment = await enrollLeadIn(t, org, w._id, { lead_id: leadId });
    expect(enrollment).toMatchObject({
      workflow_id: w._id,
      lead_id: leadId,
      contact_id: contactId,
      enrolled_by: org.ownerId,
      connected_account_id: null,
      status: 'active',
      current_step: 0,
      attempts: 0,
    });
    // The first step is due after its own delay (2 days).
    const due = Date.parse(enrollment.next_run_at ?? '');
    expect(due - before).toBeGreaterThanOrEqual(2 * 86_400_000);
    expect(due - Date.now()).toBeLessThanOrEqual(2 * 86_400_000);

    const events = await eventsOf(t, enrollment._id, org.orgId);
    expect(events.map((e) => e.event)).toEqual(['workflow.triggered']);
    expect(events[0]?.data).toMatchObject({ _id: enrollment._id, workflow_name: 'Nurture', step_count: 1 });

    const again = await readError(
      await api(t, org, 'POST', `/workflows/${w._id}/enrollments`, { lead_id: leadId }),
      409,
    );
    expect(again.message).toContain(enrollment._id);
    expect(again.enrollment_id).toBe(enrollment._id);

    const list = await readOutput(
      await api(t, org, 'GET', `/workflows/${w._id}/enrollments?status=active`),
      WORKFLOW_TOOL.list_workflow_enrollments,
    );
    expect(list).toMatchObject({ total: 1, page: 1, totalPages: 1 });
    expect(list.enrollments).toEqual([enrollment]);
    const none = await readOutput(
      await api(t, org, 'GET', `/workflows/${w._id}/enrollments?status=stopped`),
      WORKFLOW_TOOL.list_workflow_enrollments,
    );
    expect(none.total).toBe(0);
    const got = await readOutput(
      await api(t, org, 'GET', `/workflows/${w._id}/enrollments/${enrollment._id}`),
      WORKFLOW_TOOL.get_workflow_enrollment,
    );
    expect(got.enrollment).toEqual({ ...enrollment, step_runs: [] });
    const counts = await readOutput(
      await api(t, org, 'GET', `/workflows/${w._id}`),
      WORKFLOW_TOOL.get_workflow,
    );
    expect(counts.workflow.enrollment_counts.active).toBe(1);
  });

  test('keeps one active enrollment per lead and workflow under five parallel enrolls', async ({
    t,
    org,
  }) => {
    const w = await createWorkflow(t, org);
    const { leadId } = await createLeadWithContact(t, org);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        api(t, org, 'POST', `/workflows/${w._id}/enrollments`, { lead_id: leadId }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const rows = await t.services.db.system
      .select()
      .from(workflowEnrollments)
      .where(eq(workflowEnrollments.workflowId, w._id));
    expect(rows).toHaveLength(1);
    expect((await eventsOf(t, rows[0]?.id ?? '', org.orgId)).length).toBe(1);
  });

  test('refuses a paused workflow, an unknown lead, a contact of another lead', async ({ t, org, other }) => {
    const paused = await createWorkflow(t, org, { status: 'paused' });
    const { leadId } = await createLeadWithContact(t, org);
    const refused = await readError(
      await api(t, org, 'POST', `/workflows/${paused._id}/enrollments`, { lead_id: leadId }),
      409,
    );
    expect(refused.message).toContain('paused');

    const w = await createWorkflow(t, org);
    const theirLead = await createLead(t, other, { name: 'Not yours' });
    const unknown = await readError(
      await api(t, org, 'POST', `/workflows/${w._id}/enrollments`, { lead_id: theirLead._id }),
      400,
    );
    expect(detailFields(unknown)).toEqual(['lead_id']);
    const elsewhere = await createLeadWithContact(t, org);
    const wrongContact = await readError(
      await api(t, org, 'POST', `/workflows/${w._id}/enrollments`, {
        lead_id: leadId,
        contact_id: elsewhere.contactId,
      }),
      400,
    );
    expect(detailFields(wrongContact)).toEqual(['contact_id']);
    expect(
      (await api(t, org, 'POST', `/workflows/${w._id}/enrollments`, { lead_id: leadId }, other.token)).status,
    ).toBe(404);
  });

  test('needs, for a workflow that sends e-mail, a contact with an address and the user’s own connected account', async ({
    t,
    org,
  }) => {
    const w = await createWorkflow(t, org, { steps: [EMAIL_STEP, TASK_STEP] });
    const { leadId, contactId } = await createLeadWithContact(t, org, 'Buyer@Prospect.test');
    // The default account is the user's own (the only one here), the contact the lead's with an address.
    const enrolled = await enrollLeadIn(t, org, w._id, { lead_id: leadId });
    expect(enrolled).toMatchObject({ contact_id: contactId, connected_account_id: accountId });

    const bare = await createLead(t, org, { name: 'No contacts' });
    const noContact = await readError(
      await api(t, org, 'POST', `/workflows/${w._id}/enrollments`, { lead_id: bare._id }),
      400,
    );
    expect(detailFields(noContact)).toEqual(['contact_id']);

    const member = await t.createUser(org.orgId, 'member');
    const second = await createLeadWithContact(t, org);
    const noAccount = await readError(
      await api(t, org, 'POST', `/workflows/${w._id}/enrollments`, { lead_id: second.leadId }, member.token),
      400,
    );
    expect(detailFields(noAccount)).toEqual(['connected_account_id']);
    expect(noAccount.details?.[0]?.message).toContain('no connected account');
    // Someone else's account is refused like an unknown one.
    const notTheirs = await readError(
      await api(
        t,
        org,
        'POST',
        `/workflows/${w._id}/enrollments`,
        { lead_id: second.leadId, connected_account_id: accountId },
        member.token,
      ),
      400,
    );
    expect(detailFields(notTheirs)).toEqual(['connected_account_id']);
    const own = await insertConnectedAccountRow(t, org.orgId, member.userId);
    const ok = await enrollLeadIn(t, member, w._id, { lead_id: second.leadId, connected_account_id: own });
    expect(ok).toMatchObject({ connected_account_id: own, enrolled_by: member.userId });
  });

  test('unenrolls: stopped with reason unenrolled, a second time 409, another organization 404', async ({
    t,
    org,
    other,
  }) => {
    const w = await createWorkflow(t, org);
    const { leadId } = await createLeadWithContact(t, org);
    const enrollment = await enrollLeadIn(t, org, w._id, { lead_id: leadId });
    const path = `/workflows/${w._id}/enrollments/${enrollment._id}`;
    expect((await api(t, org, 'DELETE', path, undefined, other.token)).status).toBe(404);
    expect(await readOutput(await api(t, org, 'DELETE', path), WORKFLOW_TOOL.unenroll_from_workflow)).toEqual(
      {
        message: 'Enrollment stopped',
      },
    );
    expect(await enrollmentRow(t, enrollment._id)).toMatchObject({
      status: 'stopped',
      stopReason: 'unenrolled',
    });
    expect((await readError(await api(t, org, 'DELETE', path), 409)).message).toContain('already stopped');
    // The lead may be enrolled again once the previous enrollment is over.
    expect((await api(t, org, 'POST', `/workflows/${w._id}/enrollments`, { lead_id: leadId })).status).toBe(
      201,
    );
  });

  test('over MCP previews (writes nothing) unless confirm is true; REST enrolls unless confirm is false', async ({
    t,
    org,
  }) => {
    const w = await createWorkflow(t, org, {
      steps: [EMAIL_STEP, TASK_STEP, { type: 'sms', delay: { amount: 1, unit: 'hours' }, body: 'Hi' }],
    });
    const { leadId, contactId, email } = await createLeadWithContact(t, org);
    const restPreview = await readOutput(
      await api(t, org, 'POST', `/workflows/${w._id}/enrollments`, { lead_id: leadId, confirm: false }),
      WORKFLOW_TOOL.enroll_in_workflow,
    );
    expect(restPreview).toEqual({ sent: false, preview: expect.any(Object) });
    const preview = restPreview.preview;
    expect(preview?.action).toContain(`workflow Nurture (${w._id})`);
    expect(preview?.action).toContain(leadId);
    expect(preview?.action).toContain(contactId);
    expect(preview?.sender).toContain(accountId);
    expect(preview?.to).toEqual([email]);
    const dueTimes = (preview?.details ?? []).map((line) => Date.parse(/ at (\S+):/.exec(line)?.[1] ?? ''));
    const [first, second, third] = dueTimes;
    expect(second && first && second - first).toBe(2 * 86_400_000);
    expect(third && second && third - second).toBe(3_600_000);

    const mcp = (args: Record<string, unknown>) =>
      t.request('POST', '/mcp', {
        token: org.token,
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'enroll_in_workflow', arguments: args },
        },
        headers: {
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'x-mcp-toolsets': 'email',
        },
      });
    const count = async () =>
      (
        await t.services.db.system
          .select()
          .from(workflowEnrollments)
          .where(eq(workflowEnrollments.workflowId, w._id))
      ).length;
    expect(await (await mcp({ id: w._id, lead_id: leadId })).text()).toContain('"sent":false');
    expect(await count()).toBe(0);
    expect(await (await mcp({ id: w._id, lead_id: leadId, confirm: true })).text()).toContain('"sent":true');
    expect(await count()).toBe(1);
  });
});

describe('roles and scopes', () => {
  test('lets a viewer read but not create, enroll or delete', async ({ t, org }) => {
    const w = await createWorkflow(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await api(t, org, 'GET', '/workflows', undefined, viewer.token)).status).toBe(200);
    expect(
      (await api(t, org, 'GET', `/workflows/${w._id}/enrollments`, undefined, viewer.token)).status,
    ).toBe(200);
    const { leadId } = await createLeadWithContact(t, org);
    expect(
      (await api(t, org, 'POST', '/workflows', { name: 'V', steps: [TASK_STEP] }, viewer.token)).status,
    ).toBe(403);
    expect(
      (await api(t, org, 'POST', `/workflows/${w._id}/enrollments`, { lead_id: leadId }, viewer.token))
        .status,
    ).toBe(403);
    expect((await api(t, org, 'POST', `/workflows/${w._id}/pause`, undefined, viewer.token)).status).toBe(
      403,
    );
    expect((await api(t, org, 'DELETE', `/workflows/${w._id}`, undefined, viewer.token)).status).toBe(403);
    // Members create and enroll but do not delete workflows.
    const member = await t.createUser(org.orgId, 'member');
    expect(
      (await api(t, org, 'POST', '/workflows', { name: 'M', steps: [TASK_STEP] }, member.token)).status,
    ).toBe(201);
    expect((await api(t, org, 'DELETE', `/workflows/${w._id}`, undefined, member.token)).status).toBe(403);
  });

  test('needs read:email to read and write:email to change, for personal access tokens', async ({
    t,
    org,
  }) => {
    const w = await createWorkflow(t, org);
    const none = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    const read = await t.createPat(org.orgId, org.ownerId, ['read:email']);
    const write = await t.createPat(org.orgId, org.ownerId, ['read:email', 'write:email']);
    expect((await api(t, org, 'GET', '/workflows', undefined, none.token)).status).toBe(403);
    expect((await api(t, org, 'GET', `/workflows/${w._id}`, undefined, read.token)).status).toBe(200);
    expect((await api(t, org, 'POST', `/workflows/${w._id}/pause`, undefined, read.token)).status).toBe(403);
    expect((await api(t, org, 'POST', `/workflows/${w._id}/pause`, undefined, write.token)).status).toBe(200);
  });
});
