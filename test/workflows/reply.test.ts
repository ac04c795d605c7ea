// Locks in stop-on-reply end to end: a signed inbound mail from the enrolled contact's address,
// posted to the account's public hook, stops the lead's active enrollment (reason replied) in the
// same transaction that records the mail, and its next step never runs.
import { describe, expect } from 'vitest';
import {
  createConnectedAccount,
  createLeadWithContact,
  createWorkflow,
  enrollLeadIn,
  enrollmentRow,
  fileTest,
  postInbound,
  runStepAt,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

describe('stop on reply through the inbound hook', () => {
  test('stops the enrollment of the contact who wrote back, and only that one', async ({ t, org }) => {
    const account = await createConnectedAccount(t, org);
    const workflow = await createWorkflow(t, org, {
      steps: [
        { type: 'email', delay: { amount: 1, unit: 'days' }, subject: 'Checking in', body_html: '<p>Hi</p>' },
        { type: 'task', delay: { amount: 2, unit: 'days' }, text: 'Call' },
      ],
    });
    const replying = await createLeadWithContact(t, org, 'jane@customer.example');
    const silent = await createLeadWithContact(t, org, 'sam@quiet.example');
    const stopped = await enrollLeadIn(t, org, workflow._id, { lead_id: replying.leadId });
    const running = await enrollLeadIn(t, org, workflow._id, { lead_id: silent.leadId });
    expect(stopped.connected_account_id).toBe(account._id);

    const res = await postInbound(t, account, { from: 'Jane Doe <Jane@Customer.example>' });
    expect(res.status).toBe(200);

    expect(await enrollmentRow(t, stopped._id)).toMatchObject({
      status: 'stopped',
      stopReason: 'replied',
      nextRunAt: null,
    });
    expect(await runStepAt(t, stopped._id, new Date(stopped.next_run_at ?? ''))).toBe('skipped');
    expect((await enrollmentRow(t, running._id)).status).toBe('active');
  });
});
