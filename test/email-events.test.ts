// Locks in that email.received reaches a real HTTPS receiver, signed, naming the inbound mail, its account, lead, contact and activity (the scheduled-email events are in test/email/events.test.ts, workflow.triggered in test/workflows/events.test.ts).
import { describe, expect } from 'vitest';
import { harnessTest } from './fixtures/harness-test.ts';
import {
  createConnectedAccount,
  createContact,
  createLead,
  decodeDelivery,
  postInbound,
  startEventReceiver,
} from './fixtures/index.ts';

const SECRET = 'email-events-secret-0123456789abc';

const test = harnessTest(() =>
  startEventReceiver({ name: 'Email', events: ['email.received'], secret: SECRET }),
).extend('account', { scope: 'file' }, async ({ t, org }) =>
  createConnectedAccount(t, org, { email: 'sales@example.com' }),
);

describe('email events over webhooks', () => {
  test('delivers email.received, signed, naming the mail, its account, lead, contact and activity', async ({
    t,
    org,
    account,
    harness,
  }) => {
    const lead = await createLead(t, org, { name: 'Events Inc' });
    const contact = await createContact(t, org, {
      lead_id: lead._id,
      emails: [{ email: 'buyer@events.example', type: 'office' }],
    });
    const res = await postInbound(t, account, {
      from: 'Buyer <buyer@events.example>',
      subject: 'Question',
      message_id: '<question-1@events.example>',
    });
    expect(res.status).toBe(200);
    const body: unknown = await res.json();
    const [hit] = await harness.receiver.waitForRequests(1, 20_000);
    if (!hit) throw new Error('no delivery');
    const delivered = decodeDelivery(hit, SECRET);
    expect(delivered.event).toBe('email.received');
    expect(delivered.data).toMatchObject({
      inbound_email_id: (body as { inbound_email_id: string }).inbound_email_id,
      connected_account_id: account._id,
      lead_id: lead._id,
      contact_id: contact._id,
      from: 'buyer@events.example',
      to: 'sales@example.com',
      subject: 'Question',
      message_id: '<question-1@events.example>',
      in_reply_to: null,
      replies_to_email_id: null,
    });
    expect(typeof delivered.data.activity_id).toBe('string');
    expect(typeof delivered.data.received_at).toBe('string');
  });
});
