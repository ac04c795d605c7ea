// Locks in that receivers using the official Standard Webhooks library and Svix's verify real
// deliveries (through the workers, over HTTPS) with the secret as configured: a generated whsec_
// secret and a user-supplied whsec_ one work as-is; a plain secret needs those libraries' raw
// format with its UTF-8 bytes. X-CRM-Signature verifies with the secret string in every case.
import { randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect } from 'vitest';
import { verifyWebhookSignature } from '../tools/webhooks/signing.ts';
import { harnessTest } from './fixtures/harness-test.ts';
import { createTestContext, json, type TestContext, type TestOrg } from './helpers.ts';
import { HttpsReceiver, type ReceivedRequest } from './support/https-receiver.ts';

/** A typical hand-written secret: not base64, so the libraries cannot read it as-is. */
const PLAIN_SECRET = 'plain-signing-secret-0123456789';
const SUPPLIED_WHSEC = `whsec_${randomBytes(24).toString('base64')}`;

/** The request headers as the libraries take them: name -> string value. */
function stringHeaders(hit: ReceivedRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(hit.headers)) {
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

function crmSignature(hit: ReceivedRequest): string {
  const value = hit.headers['x-crm-signature'];
  return typeof value === 'string' ? value : '';
}

/** What a receiver does with either library: construct with its secret, verify the raw body. */
function verifyWithLibraries(hit: ReceivedRequest, secret: string | Uint8Array, raw = false): void {
  const options = raw ? { format: 'raw' as const } : undefined;
  new StandardWebhook(secret, options).verify(hit.body, stringHeaders(hit));
  new SvixWebhook(secret, options).verify(hit.body, stringHeaders(hit));
}

async function subscribe(
  t: TestContext,
  org: TestOrg,
  receiver: HttpsReceiver,
  path: string,
  secret?: string,
): Promise<{ _id: string; secret?: string }> {
  const res = await t.request('POST', '/api/v1/webhooks', {
    token: org.token,
    body: { name: path, url: receiver.url(path), events: ['lead.created'], ...(secret ? { secret } : {}) },
  });
  expect(res.status).toBe(201);
  return (await json<{ webhook: { _id: string; secret?: string } }>(res)).webhook;
}

function onlyHit(receiver: HttpsReceiver, path: string): ReceivedRequest {
  const [hit, ...more] = receiver.hits(path);
  if (!hit) throw new Error(`no delivery reached ${path}`);
  expect(more).toEqual([]);
  return hit;
}

/**
 * A receiver, a context whose workers trust it, three subscriptions posting to it (a generated, a
 * supplied whsec_ and a plain secret), and one event delivered to each.
 */
async function startDeliveries() {
  const receiver = await HttpsReceiver.start();
  const t = await createTestContext(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    { withoutRateLimits: true, withWorkers: { ca: receiver.ca } },
  );
  const org = await t.createOrg({ plan: 'starter' });
  const generated = await subscribe(t, org, receiver, '/generated');
  await subscribe(t, org, receiver, '/supplied', SUPPLIED_WHSEC);
  await subscribe(t, org, receiver, '/plain', PLAIN_SECRET);
  // One event, delivered to each of the three subscriptions.
  const lead = await t.request('POST', '/api/v1/leads', { token: org.token, body: { name: 'Verified Inc' } });
  expect(lead.status).toBe(201);
  await receiver.waitForRequests(3, 10_000);
  return {
    t,
    org,
    receiver,
    generatedId: generated._id,
    generatedSecret: generated.secret ?? '',
    async close() {
      await t.close();
      await receiver.close();
    },
  };
}

const test = harnessTest(startDeliveries);

describe('verifying deliveries with the Standard Webhooks and Svix libraries', () => {
  test('verifies deliveries to a generated secret with the secret as returned at creation', async ({
    t,
    org,
    harness,
  }) => {
    const { receiver, generatedId, generatedSecret } = harness;
    expect(generatedSecret).toMatch(/^whsec_/);
    onlyHit(receiver, '/generated');
    const test = await t.request('POST', `/api/v1/webhooks/test/${generatedId}`, { token: org.token });
    expect(test.status).toBe(200);
    await receiver.waitForRequests(4, 10_000);
    const hits = receiver.hits('/generated');
    expect(hits.map((hit) => hit.headers['x-crm-event'])).toEqual(['lead.created', 'webhook.test']);
    for (const hit of hits) {
      verifyWithLibraries(hit, generatedSecret);
      expect(verifyWebhookSignature(hit.body, crmSignature(hit), generatedSecret)).toBe(true);
      // The same check refuses a delivery signed with another key.
      const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
      expect(() => verifyWithLibraries(hit, otherSecret)).toThrow('No matching signature found');
    }
  });

  test('verifies a user-supplied whsec_ secret as configured, and a plain one only as raw UTF-8 bytes', ({
    harness: { receiver },
  }) => {
    const supplied = onlyHit(receiver, '/supplied');
    verifyWithLibraries(supplied, SUPPLIED_WHSEC);
    expect(verifyWebhookSignature(supplied.body, crmSignature(supplied), SUPPLIED_WHSEC)).toBe(true);

    // The libraries base64-decode a configured secret, so a plain one cannot be given as-is;
    // given its UTF-8 bytes in their raw format, they verify. X-CRM-Signature needs nothing special.
    const plain = onlyHit(receiver, '/plain');
    expect(() => verifyWithLibraries(plain, PLAIN_SECRET)).toThrow();
    verifyWithLibraries(plain, new TextEncoder().encode(PLAIN_SECRET), true);
    expect(verifyWebhookSignature(plain.body, crmSignature(plain), PLAIN_SECRET)).toBe(true);
  });
});
