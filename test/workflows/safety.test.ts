// Locks in that a workflow cannot send from someone else's mailbox (docs/security.md "Workflows and
// scheduled email"), against a real SMTP peer: members change only the workflows they created; an
// enrollment runs the steps it began with, so an edit after enrolling changes no running mail; email
// steps go out from the enrolling user's own account, checked again when the step runs and when the
// mail is sent (a demoted or deactivated user, or an account no longer verified, stops with the
// reason and nothing reaches the peer); a second active enrollment of a lead in a workflow is a 409
// already_enrolled over REST and MCP, also under parallel enrolls (the services config runs this
// file on PostgreSQL too).
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect } from 'vitest';
import type { StepOutcome } from '../../tools/workflows/steps-runner.ts';
import { workflowEnrollments } from '../../tools/workflows/tables.ts';
import { sendScheduledEmail } from '../fixtures/email.ts';
import {
  type Caller,
  createLeadWithContact,
  createWorkflow,
  enrollLeadIn,
  enrollmentRow,
  fileTest,
  insertConnectedAccount,
  readError,
  readOutput,
  runStepAt,
  scheduledEmailsOf,
  type TestAccount,
  type TestContext,
  type TestOrg,
  WORKFLOW_TOOL,
} from '../fixtures/index.ts';
import { bearer, ERAS, envelopeOf, serveMcp } from '../mcp-clients.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

const LOGIN = { username: 'sender', password: 'smtp-secret-1' };
let peer: SmtpPeer;
let ownerAccount: TestAccount;
let seq = 0;

const test = fileTest({ options: { withoutRateLimits: true } });

test.beforeAll(async ({ t, org }) => {
  peer = await startSmtpPeer({ auth: LOGIN });
  ownerAccount = await insertConnectedAccount(
    t,
    { orgId: org.orgId, userId: org.ownerId },
    { host: peer.host, port: peer.port, ...LOGIN },
    { email: 'owner@acme.example' },
  );
});
afterAll(async () => {
  await peer?.close();
});

const api = (t: TestContext, as: Caller, method: string, path: string, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: as.token, body });
const received = (subject: string) => peer.received.filter((m) => m.subject === subject);

/** A workflow (of `as`, active) whose first step is an email with this subject, then a task a day later. */
function emailWorkflow(t: TestContext, as: Caller, subject: string, text = 'Original text') {
  return createWorkflow(t, as, {
    steps: [
      {
        type: 'email',
        delay: { amount: 1, unit: 'hours' },
        subject,
        body_html: `<p>${text}</p>`,
        body_text: text,
      },
      { type: 'task', delay: { amount: 1, unit: 'days' }, text: 'Follow up' },
    ],
  });
}

/** A member with a verified account of their own at the peer. */
async function memberWithAccount(
  t: TestContext,
  org: TestOrg,
): Promise<{
  member: Awaited<ReturnType<TestContext['createUser']>>;
  account: TestAccount;
}> {
  seq += 1;
  const member = await t.createUser(org.orgId, 'member');
  const account = await insertConnectedAccount(
    t,
    { orgId: org.orgId, userId: member.userId },
    { host: peer.host, port: peer.port, ...LOGIN },
    { email: `member${seq}@acme.example` },
  );
  return { member, account };
}

/** Runs the enrollment's email step at its time (`outcome` its answer) and returns the scheduled email it wrote. */
async function runEmailStep(
  t: TestContext,
  enrollmentId: string,
  due: Date,
  outcome: StepOutcome = 'advanced',
) {
  expect(await runStepAt(t, enrollmentId, due)).toBe(outcome);
  const [email] = await scheduledEmailsOf(t, enrollmentId);
  if (!email) throw new Error('the email step wrote no scheduled email');
  return email;
}

describe('who changes a workflow', () => {
  test('members change only the workflows they created; owners, admins and managers change any', async ({
    t,
    org,
  }) => {
    const owners = await emailWorkflow(t, org, 'Owner sequence');
    const { member } = await memberWithAccount(t, org);
    const hijack = {
      steps: [
        { type: 'email', delay: { amount: 0, unit: 'minutes' }, subject: 'Wire me', body_html: '<p>x</p>' },
      ],
    };
    for (const [method, path, body] of [
      ['PATCH', `/workflows/${owners._id}`, hijack],
      ['PUT', `/workflows/${owners._id}`, { name: 'Mine now' }],
      ['POST', `/workflows/${owners._id}/pause`, undefined],
      ['POST', `/workflows/${owners._id}/activate`, undefined],
    ] as const) {
      const refused = await readError(await api(t, member, method, path, body), 403);
      expect(refused, `${method} ${path}`).toMatchObject({
        code: 'forbidden',
        required_permission: 'workflows.manage_any',
      });
    }
    const unchanged = await readOutput(
      await api(t, org, 'GET', `/workflows/${owners._id}`),
      WORKFLOW_TOOL.get_workflow,
    );
    expect(unchanged.workflow).toMatchObject({ name: owners.name, status: 'active', steps: owners.steps });

    // Over MCP the same refusal, as a tool error with the same envelope.
    const { url, stop } = await serveMcp(t);
    const client = await ERAS[0]?.connect(url, { ...bearer(member.token), 'X-MCP-Toolsets': 'email' });
    if (!client) throw new Error('no MCP client era');
    try {
      const result = await client.callTool('update_workflow', { id: owners._id, name: 'Mine now' });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({
        code: 'forbidden',
        required_permission: 'workflows.manage_any',
      });
    } finally {
      await client.close();
      await stop();
    }

    // Their own workflow is theirs to change; a manager (and the owner) change anyone's.
    const own = await emailWorkflow(t, member, 'Member sequence');
    expect((await api(t, member, 'PATCH', `/workflows/${own._id}`, { name: 'Mine' })).status).toBe(200);
    expect((await api(t, member, 'POST', `/workflows/${own._id}/pause`)).status).toBe(200);
    const manager = await t.createUser(org.orgId, 'manager');
    expect((await api(t, manager, 'POST', `/workflows/${own._id}/activate`)).status).toBe(200);
    expect((await api(t, manager, 'PATCH', `/workflows/${owners._id}`, { name: 'Renamed' })).status).toBe(
      200,
    );
    expect((await api(t, org, 'DELETE', `/workflows/${own._id}`)).status).toBe(200);
  });
});

describe('what an enrollment sends', () => {
  test('runs the steps it began with: an edit after enrolling changes no running mail, only new enrollments', async ({
    t,
    org,
  }) => {
    const workflow = await emailWorkflow(t, org, 'Before the edit', 'What the owner wrote');
    const lead = await createLeadWithContact(t, org);
    const enrollment = await enrollLeadIn(t, org, workflow._id, { lead_id: lead.leadId });
    const edit = await api(t, org, 'PATCH', `/workflows/${workflow._id}`, {
      steps: [
        {
          type: 'email',
          delay: { amount: 1, unit: 'hours' },
          subject: 'After the edit',
          body_html: '<p>Something else</p>',
          body_text: 'Something else',
        },
      ],
    });
    expect(edit.status).toBe(200);

    const due = new Date(enrollment.next_run_at ?? '');
    const email = await runEmailStep(t, enrollment._id, due);
    expect(await sendScheduledEmail(t.services, email.id, { now: due })).toBe('sent');
    const [mail] = received('Before the edit');
    expect(mail?.text?.trim()).toBe('What the owner wrote');
    expect(received('After the edit')).toHaveLength(0);
    // It goes on with its own second step (the task), which the edit removed from the workflow.
    expect(await enrollmentRow(t, enrollment._id)).toMatchObject({ status: 'active', currentStep: 1 });

    // A lead enrolled after the edit runs the new steps.
    const next = await createLeadWithContact(t, org);
    const later = await enrollLeadIn(t, org, workflow._id, { lead_id: next.leadId });
    const laterEmail = await runEmailStep(t, later._id, new Date(later.next_run_at ?? ''), 'completed');
    expect(laterEmail.subject).toBe('After the edit');
  });

  test('sends an email step from the enrolling user’s own account, not the workflow owner’s', async ({
    t,
    org,
  }) => {
    const workflow = await emailWorkflow(t, org, 'From the enroller');
    const { member, account } = await memberWithAccount(t, org);
    const lead = await createLeadWithContact(t, org);
    const enrollment = await enrollLeadIn(t, member, workflow._id, { lead_id: lead.leadId });
    expect(enrollment).toMatchObject({ enrolled_by: member.userId, connected_account_id: account.id });
    const due = new Date(enrollment.next_run_at ?? '');
    const email = await runEmailStep(t, enrollment._id, due);
    expect(email).toMatchObject({ userId: member.userId, connectedAccountId: account.id });
    expect(await sendScheduledEmail(t.services, email.id, { now: due })).toBe('sent');
    const [mail] = received('From the enroller');
    expect(mail?.from?.text).toBe(account.email);
    expect(mail?.from?.text).not.toBe(ownerAccount.email);
  });
});

describe('the sender checked again', () => {
  test('a demoted enrolling user: the email step fails with the reason and nothing is written or sent', async ({
    t,
    org,
  }) => {
    const workflow = await emailWorkflow(t, org, 'Demoted before the step');
    const { member } = await memberWithAccount(t, org);
    const lead = await createLeadWithContact(t, org);
    const enrollment = await enrollLeadIn(t, member, workflow._id, { lead_id: lead.leadId });
    expect((await api(t, org, 'PUT', `/users/${member.userId}`, { role: 'viewer' })).status).toBe(200);

    expect(await runStepAt(t, enrollment._id, new Date(enrollment.next_run_at ?? ''))).toBe('failed');
    expect(await enrollmentRow(t, enrollment._id)).toMatchObject({
      status: 'failed',
      stopReason: "the sender's role (viewer) no longer allows sending e-mail",
      nextRunAt: null,
    });
    expect(await scheduledEmailsOf(t, enrollment._id)).toEqual([]);
    expect(received('Demoted before the step')).toHaveLength(0);
  });

  test('demoted or deactivated after the step wrote its email: the mail fails with the reason, the enrollment stops, nothing sent', async ({
    t,
    org,
  }) => {
    const cases = [
      {
        subject: 'Demoted before the send',
        change: (userId: string) => api(t, org, 'PUT', `/users/${userId}`, { role: 'viewer' }),
        reason: "the sender's role (viewer) no longer allows sending e-mail",
      },
      {
        subject: 'Deactivated before the send',
        change: (userId: string) => api(t, org, 'POST', `/users/${userId}/deactivate`),
        reason: 'the sender is no longer an active user of the organization',
      },
    ];
    for (const { subject, change, reason } of cases) {
      const workflow = await emailWorkflow(t, org, subject);
      const { member } = await memberWithAccount(t, org);
      const lead = await createLeadWithContact(t, org);
      const enrollment = await enrollLeadIn(t, member, workflow._id, { lead_id: lead.leadId });
      const due = new Date(enrollment.next_run_at ?? '');
      const email = await runEmailStep(t, enrollment._id, due);
      expect((await change(member.userId)).status, subject).toBe(200);

      expect(await sendScheduledEmail(t.services, email.id, { now: due }), subject).toBe('failed');
      const [row] = await scheduledEmailsOf(t, enrollment._id);
      expect(row, subject).toMatchObject({ status: 'failed', lastError: reason });
      expect(await enrollmentRow(t, enrollment._id), subject).toMatchObject({
        status: 'failed',
        stopReason: `email step 0 not sent: ${reason}`,
        nextRunAt: null,
      });
      expect(received(subject), subject).toHaveLength(0);
    }
  });

  test('an account no longer verified: the email step fails with the reason', async ({ t, org }) => {
    const workflow = await emailWorkflow(t, org, 'Unverified account');
    seq += 1;
    const member = await t.createUser(org.orgId, 'member');
    // A wrong password: verifying it against the peer records status error.
    const account = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: member.userId },
      { host: peer.host, port: peer.port, username: LOGIN.username, password: 'not-the-password' },
      { email: `member${seq}@acme.example` },
    );
    const lead = await createLeadWithContact(t, org);
    const enrollment = await enrollLeadIn(t, member, workflow._id, { lead_id: lead.leadId });
    const verify = await api(t, member, 'POST', `/connected-accounts/${account.id}/verify`);
    expect(verify.status).toBe(200);

    expect(await runStepAt(t, enrollment._id, new Date(enrollment.next_run_at ?? ''))).toBe('failed');
    expect((await enrollmentRow(t, enrollment._id)).stopReason).toBe(
      'the connected account is not verified (status error)',
    );
    expect(received('Unverified account')).toHaveLength(0);
  });
});

describe('one active enrollment per lead and workflow', () => {
  test('a second enrollment is a 409 already_enrolled naming the first, over REST and MCP', async ({
    t,
    org,
  }) => {
    const workflow = await emailWorkflow(t, org, 'Once only');
    const lead = await createLeadWithContact(t, org);
    const first = await enrollLeadIn(t, org, workflow._id, { lead_id: lead.leadId });
    const again = await readError(
      await api(t, org, 'POST', `/workflows/${workflow._id}/enrollments`, { lead_id: lead.leadId }),
      409,
    );
    expect(again).toMatchObject({ code: 'already_enrolled', enrollment_id: first._id });

    const { url, stop } = await serveMcp(t);
    const client = await ERAS[0]?.connect(url, { ...bearer(org.token), 'X-MCP-Toolsets': 'email' });
    if (!client) throw new Error('no MCP client era');
    try {
      const result = await client.callTool('enroll_in_workflow', {
        id: workflow._id,
        lead_id: lead.leadId,
        confirm: true,
      });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({ code: 'already_enrolled', enrollment_id: first._id });
    } finally {
      await client.close();
      await stop();
    }
    const rows = await t.services.db.system
      .select()
      .from(workflowEnrollments)
      .where(eq(workflowEnrollments.workflowId, workflow._id));
    expect(rows.map((r) => r.id)).toEqual([first._id]);
  });

  test('five parallel enrolls of one lead give one enrollment and four 409 already_enrolled', async ({
    t,
    org,
  }) => {
    for (let round = 0; round < 3; round++) {
      const workflow = await emailWorkflow(t, org, `Parallel ${round}`);
      const lead = await createLeadWithContact(t, org);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          api(t, org, 'POST', `/workflows/${workflow._id}/enrollments`, { lead_id: lead.leadId }),
        ),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      const rows = await t.services.db.system
        .select()
        .from(workflowEnrollments)
        .where(eq(workflowEnrollments.workflowId, workflow._id));
      expect(rows).toHaveLength(1);
      for (const res of answers.filter((r) => r.status === 409)) {
        expect(await readError(res, 409)).toMatchObject({
          code: 'already_enrolled',
          enrollment_id: rows[0]?.id,
        });
      }
    }
  });
});
