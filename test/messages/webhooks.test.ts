// Locks in sms.sent and sms.received end to end: a subscription created over REST receives both, signed, from the real workers, after an SMS sent through the Twilio peer and an inbound message the peer posts to the signed hook.
import { describe, expect } from 'vitest';
import { verifyWebhookSignature } from '../../tools/webhooks/signing.ts';
import { createTestContext, type TestContext, type TestOrg } from '../fixtures/context.ts';
import { harnessTest } from '../fixtures/harness-test.ts';
import { HttpsReceiver, type ReceivedRequest } from '../support/https-receiver.ts';
import { startTwilioPeer, type TwilioPeer } from '../support/twilio-peer.ts';
import { connectTelephony } from '../telephony/kit.ts';
import { createNumber, leadWithPhone } from './kit.ts';

const SECRET = 'sms-e2e-secret-0123456789abcdef';

interface SmsHarness {
  t: TestContext;
  org: TestOrg;
  peer: TwilioPeer;
  receiver: HttpsReceiver;
  close(): Promise<void>;
}

async function start(): Promise<SmsHarness> {
  const receiver = await HttpsReceiver.start();
  let app: TestContext | undefined;
  const peer = await startTwilioPeer({
    deliver: (url, init) => {
      if (!app) throw new Error('no app yet');
      return Promise.resolve(app.app.request(url, init));
    },
  });
  const t = await createTestContext(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', TWILIO_API_BASE_URL: peer.url },
    { withoutRateLimits: true, withWorkers: { ca: receiver.ca } },
  );
  app = t;
  const org = await t.createOrg({ plan: 'starter' });
  await connectTelephony(t, org, peer);
  const res = await t.request('POST', '/api/v1/webhooks', {
    token: org.token,
    body: { name: 'SMS', url: receiver.url('/sms'), events: ['sms.sent', 'sms.received'], secret: SECRET },
  });
  expect(res.status).toBe(201);
  return {
    t,
    org,
    peer,
    receiver,
    async close() {
      await t.close();
      await peer.close();
      await receiver.close();
    },
  };
}

const test = harnessTest(start);

function eventOf(hit: ReceivedRequest): { event: string; data: Record<string, unknown> } {
  const signature = hit.headers['x-crm-signature'];
  expect(verifyWebhookSignature(hit.body, typeof signature === 'string' ? signature : '', SECRET)).toBe(true);
  return JSON.parse(hit.body.toString('utf8'));
}

describe('sms.sent and sms.received to a subscriber', () => {
  test('both arrive signed with the message as data', async ({ t, org, harness }) => {
    const from = await createNumber(t, org);
    const lead = await leadWithPhone(t, org);
    const sent = await t.request('POST', '/api/v1/sms', {
      token: org.token,
      body: { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Webhook me' },
    });
    expect(sent.status).toBe(201);
    const inbound = harness.peer.inboundMessage(lead.phone, from.number, 'Webhook back');
    const answer = await harness.peer.sendInbound(
      `${t.config.publicBaseUrl}/hooks/twilio/messaging`,
      inbound,
    );
    expect(answer.status).toBe(200);
    const hits = await harness.receiver.waitForRequests(2, 15_000);
    const events = hits.map(eventOf);
    const out = events.find((e) => e.event === 'sms.sent');
    const back = events.find((e) => e.event === 'sms.received');
    expect(out?.data).toMatchObject({
      direction: 'outbound',
      to: lead.phone,
      from: from.number,
      body: 'Webhook me',
      sid: harness.peer.messages.at(-1)?.sid,
    });
    expect(back?.data).toMatchObject({
      direction: 'inbound',
      lead_id: lead.leadId,
      from: lead.phone,
      body: 'Webhook back',
      sid: inbound.MessageSid,
      status: 'received',
    });
  });
});
