// Locks in a workflow's email step end to end against a real SMTP peer: the step writes a scheduled
// email due at once, the 'email.send' handler sends it through the enrolling user's connected
// account to the enrolled contact, and the sent email points back at the enrollment and its step.
import { afterAll, describe, expect } from 'vitest';
import { sendScheduledEmail } from '../fixtures/email.ts';
import {
  createLeadWithContact,
  createWorkflow,
  enrollLeadIn,
  enrollmentRow,
  fileTest,
  insertConnectedAccount,
  runStepAt,
  scheduledEmailsOf,
  type TestAccount,
} from '../fixtures/index.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

const LOGIN = { username: 'sender', password: 'smtp-secret-1' };
let peer: SmtpPeer;
let account: TestAccount;

const test = fileTest({ options: { withoutRateLimits: true } });

test.beforeAll(async ({ t, org }) => {
  peer = await startSmtpPeer({ auth: LOGIN });
  account = await insertConnectedAccount(
    t,
    { orgId: org.orgId, userId: org.ownerId },
    { host: peer.host, port: peer.port, ...LOGIN },
    { email: 'dee@acme.example', displayName: 'Dee Sales' },
  );
});
afterAll(async () => {
  await peer?.close();
});

describe('email step', () => {
  test('sends through the enrolling user’s account to the contact at the step’s time', async ({ t, org }) => {
    const workflow = await createWorkflow(t, org, {
      steps: [
        {
          type: 'email',
          delay: { amount: 2, unit: 'hours' },
          subject: 'Workflow hello',
          body_html: '<p>Hello from the sequence</p>',
          body_text: 'Hello from the sequence',
        },
        { type: 'task', delay: { amount: 1, unit: 'days' }, text: 'Follow up' },
      ],
    });
    const lead = await createLeadWithContact(t, org, 'buyer@customer.example');
    const enrollment = await enrollLeadIn(t, org, workflow._id, { lead_id: lead.leadId });
    expect(enrollment.connected_account_id).toBe(account.id);
    const due = new Date(enrollment.next_run_at ?? '');

    expect(await runStepAt(t, enrollment._id, due)).toBe('advanced');
    const [email] = await scheduledEmailsOf(t, enrollment._id);
    if (!email) throw new Error('the email step wrote no scheduled email');
    expect(await sendScheduledEmail(t.services, email.id, { now: due })).toBe('sent');

    const mails = peer.received.filter((m) => m.subject === 'Workflow hello');
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail?.from?.text).toBe('"Dee Sales" <dee@acme.example>');
    expect(mail?.to && 'text' in mail.to ? mail.to.text : '').toBe('buyer@customer.example');
    expect(mail?.html).toContain('Hello from the sequence');
    expect(mail?.text?.trim()).toBe('Hello from the sequence');
    const [sent] = await scheduledEmailsOf(t, enrollment._id);
    expect(sent).toMatchObject({ status: 'sent', workflowEnrollmentId: enrollment._id, workflowStep: 0 });
    // The enrollment went on to its task step, a day after the email step ran.
    expect(await enrollmentRow(t, enrollment._id)).toMatchObject({
      status: 'active',
      currentStep: 1,
      nextRunAt: new Date(due.getTime() + 86_400_000),
    });
  });
});
