// Locks in that the email events reach a real HTTPS receiver, signed, with their payload: email.received for an inbound mail (the other email events join this file as they land).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../workers/signing.ts';
import {
  type ConnectedAccount,
  createConnectedAccount,
  createContact,
  createLead,
  postInbound,
} from './fixtures/index.ts';
import { createTestContext, type TestContext, type TestOrg } from './helpers.ts';
import { HttpsReceiver, type ReceivedRequest } from './support/https-receiver.ts';

const SECRET = 'email-events-secret-0123456789abc';

let receiver: HttpsReceiver;
let t: TestContext;
let org: TestOrg;
let account: ConnectedAccount;

beforeAll(async () => {
  receiver = await HttpsReceiver.start();
  t = await createTestContext(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    { withoutRateLimits: true, withWorkers: { ca: receiver.ca } },
  );
  org = await t.createOrg({ plan: 'pro' });
  const res = await t.request('POST', '/api/v1/webhooks', {
    token: org.token,
    body: { name: 'Email', url: receiver.url('/email'), events: ['email.received'], secret: SECRET },
  });
  expect(res.status).toBe(201);
  account = await createConnectedAccount(t, org, { email: 'sales@example.com' });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

function decode(hit: ReceivedRequest): { event: string; data: Record<string, unknown> } {
  const signature = hit.headers['x-crm-signature'];
  expect(verifyWebhookSignature(hit.body, typeof signature === 'string' ? signature : '', SECRET)).toBe(true);
  const parsed: unknown = JSON.parse(hit.body.toString('utf8'));
  if (typeof parsed !== 'object' || parsed === null || !('event' in parsed) || !('data' in parsed))
    throw new Error('delivery body is not { event, data }');
  const { event, data } = parsed;
  if (typeof event !== 'string' || typeof data !== 'object' || data === null)
    throw new Error('bad delivery body');
  return { event, data: Object.fromEntries(Object.entries(data)) };
}

describe('email events over webhooks', () => {
  it('delivers email.received, signed, naming the mail, its account, lead, contact and activity', async () => {
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
    const [hit] = await receiver.waitForRequests(1, 20_000);
    if (!hit) throw new Error('no delivery');
    const delivered = decode(hit);
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
