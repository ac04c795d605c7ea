// Locks in that receivers using the official Standard Webhooks library and Svix's verify real
// deliveries (through the workers, over HTTPS) with the secret as configured: a generated whsec_
// secret and a user-supplied whsec_ one work as-is; a plain secret needs those libraries' raw
// format with its UTF-8 bytes. X-CRM-Signature verifies with the secret string in every case.
import { randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../tools/webhooks/signing.ts';
import { createTestContext, json, type TestContext, type TestOrg } from './helpers.ts';
import { HttpsReceiver, type ReceivedRequest } from './support/https-receiver.ts';

/** A typical hand-written secret: not base64, so the libraries cannot read it as-is. */
const PLAIN_SECRET = 'plain-signing-secret-0123456789';
const SUPPLIED_WHSEC = `whsec_${randomBytes(24).toString('base64')}`;

let receiver: HttpsReceiver;
let t: TestContext;
let org: TestOrg;
let generatedId: string;
let generatedSecret: string;

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

async function subscribe(path: string, secret?: string): Promise<{ _id: string; secret?: string }> {
  const res = await t.request('POST', '/api/v1/webhooks', {
    token: org.token,
    body: { name: path, url: receiver.url(path), events: ['lead.created'], ...(secret ? { secret } : {}) },
  });
  expect(res.status).toBe(201);
  return (await json<{ webhook: { _id: string; secret?: string } }>(res)).webhook;
}

function onlyHit(path: string): ReceivedRequest {
  const [hit, ...more] = receiver.hits(path);
  if (!hit) throw new Error(`no delivery reached ${path}`);
  expect(more).toEqual([]);
  return hit;
}

beforeAll(async () => {
  receiver = await HttpsReceiver.start();
  t = await createTestContext(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    { withoutRateLimits: true, withWorkers: { ca: receiver.ca } },
  );
  org = await t.createOrg({ plan: 'starter' });
  const generated = await subscribe('/generated');
  generatedId = generated._id;
  generatedSecret = generated.secret ?? '';
  await subscribe('/supplied', SUPPLIED_WHSEC);
  await subscribe('/plain', PLAIN_SECRET);
  // One event, delivered to each of the three subscriptions.
  const lead = await t.request('POST', '/api/v1/leads', { token: org.token, body: { name: 'Verified Inc' } });
  expect(lead.status).toBe(201);
  await receiver.waitForRequests(3, 10_000);
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

describe('verifying deliveries with the Standard Webhooks and Svix libraries', () => {
  it('verifies deliveries to a generated secret with the secret as returned at creation', async () => {
    expect(generatedSecret).toMatch(/^whsec_/);
    onlyHit('/generated');
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

  it('verifies a user-supplied whsec_ secret as configured, and a plain one only as raw UTF-8 bytes', () => {
    const supplied = onlyHit('/supplied');
    verifyWithLibraries(supplied, SUPPLIED_WHSEC);
    expect(verifyWebhookSignature(supplied.body, crmSignature(supplied), SUPPLIED_WHSEC)).toBe(true);

    // The libraries base64-decode a configured secret, so a plain one cannot be given as-is;
    // given its UTF-8 bytes in their raw format, they verify. X-CRM-Signature needs nothing special.
    const plain = onlyHit('/plain');
    expect(() => verifyWithLibraries(plain, PLAIN_SECRET)).toThrow();
    verifyWithLibraries(plain, new TextEncoder().encode(PLAIN_SECRET), true);
    expect(verifyWebhookSignature(plain.body, crmSignature(plain), PLAIN_SECRET)).toBe(true);
  });
});
