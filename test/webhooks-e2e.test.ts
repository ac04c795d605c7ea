// Locks in webhooks end to end through the public API and real workers: a subscription created
// over REST receives a signed lead.created, the test endpoint sends a signed webhook.test at once,
// and a replay re-sends the same delivery id with a fresh timestamp and signature.
import { describe, expect } from 'vitest';
import { verifyStandardWebhook, verifyWebhookSignature } from '../tools/webhooks/signing.ts';
import { harnessTest } from './fixtures/harness-test.ts';
import { createTestContext, json, type TestContext, type TestOrg } from './helpers.ts';
import { HttpsReceiver, type ReceivedRequest } from './support/https-receiver.ts';

const SECRET = 'e2e-secret-0123456789abcdef';

interface Delivery {
  _id: string;
  event: string;
  status: string;
  attempts: { status_code: number | null }[];
}

function header(hit: ReceivedRequest, name: string): string {
  const value = hit.headers[name];
  return typeof value === 'string' ? value : '';
}

function expectSigned(hit: ReceivedRequest): void {
  expect(verifyWebhookSignature(hit.body, header(hit, 'x-crm-signature'), SECRET)).toBe(true);
  expect(
    verifyStandardWebhook(
      hit.body,
      {
        id: header(hit, 'webhook-id'),
        timestamp: header(hit, 'webhook-timestamp'),
        signature: header(hit, 'webhook-signature'),
      },
      SECRET,
    ),
  ).toBe(true);
}

async function waitForDelivery(
  { t, org, webhookId }: WebhookHarness,
  id: string,
  status: string,
): Promise<Delivery> {
  for (let i = 0; i < 100; i++) {
    const res = await t.request('GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=100`, {
      token: org.token,
    });
    const found = (await json<{ deliveries: Delivery[] }>(res)).deliveries.find((d) => d._id === id);
    if (found?.status === status) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`delivery ${id} never reached ${status}`);
}

interface WebhookHarness {
  t: TestContext;
  org: TestOrg;
  receiver: HttpsReceiver;
  webhookId: string;
  close(): Promise<void>;
}

/** A receiver, a context whose workers trust it, and a subscription created over REST posting to it. */
async function startWebhookHarness(): Promise<WebhookHarness> {
  const receiver = await HttpsReceiver.start();
  const t = await createTestContext(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    { withoutRateLimits: true, withWorkers: { ca: receiver.ca } },
  );
  const org = await t.createOrg({ plan: 'starter' });
  const res = await t.request('POST', '/api/v1/webhooks', {
    token: org.token,
    body: { name: 'E2E', url: receiver.url('/crm'), events: ['lead.created'], secret: SECRET },
  });
  expect(res.status).toBe(201);
  const webhookId = (await json<{ webhook: { _id: string } }>(res)).webhook._id;
  return {
    t,
    org,
    receiver,
    webhookId,
    async close() {
      await t.close();
      await receiver.close();
    },
  };
}

const test = harnessTest(startWebhookHarness);

describe('webhooks end to end', () => {
  test('delivers a signed lead.created for a lead created over REST', async ({ t, org, harness }) => {
    const created = await t.request('POST', '/api/v1/leads', {
      token: org.token,
      body: { name: 'Hooked Inc' },
    });
    expect(created.status).toBe(201);
    const leadId = (await json<{ lead: { _id: string } }>(created)).lead._id;
    const [hit] = await harness.receiver.waitForRequests(1, 10_000);
    if (!hit) throw new Error('no delivery arrived');
    expectSigned(hit);
    expect(header(hit, 'x-crm-event')).toBe('lead.created');
    const body = JSON.parse(hit.body.toString('utf8'));
    expect(body).toMatchObject({
      event: 'lead.created',
      org_id: org.orgId,
      data: { _id: leadId, name: 'Hooked Inc' },
    });
    await waitForDelivery(harness, header(hit, 'x-crm-delivery-id'), 'succeeded');
  });

  test('sends webhook.test at once, and a replay re-sends the same delivery id freshly signed', async ({
    t,
    org,
    harness,
  }) => {
    const before = harness.receiver.requests.length;
    const test = await t.request('POST', `/api/v1/webhooks/test/${harness.webhookId}`, { token: org.token });
    expect(test.status).toBe(200);
    const deliveryId = (await json<{ delivery: { _id: string } }>(test)).delivery._id;
    const hits = await harness.receiver.waitForRequests(before + 1, 10_000);
    const first = hits[before];
    if (!first) throw new Error('no test delivery arrived');
    expect(header(first, 'x-crm-event')).toBe('webhook.test');
    expect(header(first, 'x-crm-delivery-id')).toBe(deliveryId);
    expectSigned(first);
    await waitForDelivery(harness, deliveryId, 'succeeded');

    // The receiver's timestamp has one-second resolution: make the replay's differ.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const replay = await t.request('POST', `/api/v1/webhooks/deliveries/${deliveryId}/replay`, {
      token: org.token,
    });
    expect(replay.status).toBe(200);
    const again = (await harness.receiver.waitForRequests(before + 2, 10_000))[before + 1];
    if (!again) throw new Error('no replay arrived');
    expect(header(again, 'x-crm-delivery-id')).toBe(deliveryId);
    expect(header(again, 'webhook-id')).toBe(deliveryId);
    expectSigned(again);
    expect(header(again, 'webhook-timestamp')).not.toBe(header(first, 'webhook-timestamp'));
    expect(header(again, 'x-crm-signature')).not.toBe(header(first, 'x-crm-signature'));
    const log = await waitForDelivery(harness, deliveryId, 'succeeded');
    expect(log.attempts).toHaveLength(2);
  });
});
