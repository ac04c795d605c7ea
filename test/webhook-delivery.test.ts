// Locks in the webhook delivery engine against a real HTTPS receiver: signed requests, the retry
// schedule, the delivery log, redirects, the hard deadline, the SSRF guard, replays and inactive
// subscriptions.
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { newId } from '../core/ids.ts';
import { createLogger } from '../core/logger.ts';
import { attemptDelivery, type DeliveryOptions, WEBHOOK_USER_AGENT } from '../tools/webhooks/deliver.ts';
import { verifyStandardWebhook, verifyWebhookSignature } from '../tools/webhooks/signing.ts';
import { webhookDeliveries } from '../tools/webhooks/tables.ts';
import { createTestContext, fileTest, type TestContext } from './fixtures/index.ts';
import { recordQueueForFile, resetReceiver, startReceiverForFile } from './fixtures/webhook-receiver.ts';
import type { HttpsReceiver, ReceivedRequest } from './support/https-receiver.ts';
import { seedWebhook, seedWebhookDelivery } from './webhooks/kit.ts';

const SECRET = 'delivery-test-secret-0123456789';
const ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_DELAYS_MS: '200,400',
  WEBHOOK_TIMEOUT_MS: '1000',
};

interface Fixture {
  webhookId: string;
  deliveryId: string;
  orgId: string;
  data: Record<string, unknown>;
}

async function insertDelivery(
  t: TestContext,
  orgId: string,
  receiver: HttpsReceiver,
  options: { url?: string; event?: string; isActive?: boolean } = {},
): Promise<Fixture> {
  const event = options.event ?? 'lead.created';
  const data = { _id: newId(), first_name: 'Zoë', updated_at: '2026-01-02T03:04:05.000Z' };
  const webhookId = await seedWebhook(
    t,
    { orgId },
    {
      url: options.url ?? receiver.url(),
      events: [event],
      secret: SECRET,
      isActive: options.isActive ?? true,
    },
  );
  const deliveryId = await seedWebhookDelivery(t, { orgId }, { webhookId, event, data });
  return { webhookId, deliveryId, orgId, data };
}

async function loadDelivery(t: TestContext, id: string) {
  const [row] = await t.services.db.system
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.id, id));
  if (!row) throw new Error(`delivery ${id} not found`);
  return row;
}

async function waitForStatus(t: TestContext, id: string, status: string, timeoutMs = 8000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await loadDelivery(t, id);
    if (row.status === status) return row;
    if (Date.now() > deadline) throw new Error(`delivery ${id} is ${row.status}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const header = (req: ReceivedRequest | undefined, name: string): string => {
  const value = req?.headers[name];
  return typeof value === 'string' ? value : '';
};

// One HTTPS receiver for the file, reset before each test that names it. The file's context (`t`, `org`)
// serves the first block, its queue replaced by a recording one; the other blocks have contexts of
// their own (private targets refused and a captured log; job workers running deliveries).
const test = fileTest({ env: ENV, plan: 'starter' })
  .extend('server', { scope: 'file' }, startReceiverForFile)
  .extend('receiver', resetReceiver)
  .extend('recording', { scope: 'file' }, recordQueueForFile)
  // The first block's scope: the file's context with its recording queue emptied, and the receiver's CA.
  .extend('direct', async ({ t, org, recording, server }) => {
    recording.jobs.length = 0;
    const options: DeliveryOptions = { ca: server.ca };
    return { t, orgId: org.orgId, queue: recording, options };
  })
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the context has none.
  .extend('blocked', { scope: 'file' }, async ({}, { onCleanup }) => {
    const logLines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    const t = await createTestContext(
      { WEBHOOK_RETRY_DELAYS_MS: '200,400', WEBHOOK_TIMEOUT_MS: '1000' },
      { logger: createLogger('info', sink) },
    );
    onCleanup(() => t.close());
    const orgId = (await t.createOrg({ plan: 'starter' })).orgId;
    return { t, orgId, logLines };
  })
  .extend('retrying', { scope: 'file' }, async ({ server }, { onCleanup }) => {
    const t = await createTestContext(ENV);
    onCleanup(() => t.close());
    const orgId = (await t.createOrg({ plan: 'starter' })).orgId;
    const services = t.services;
    await services.queue.startWorkers(
      {
        'webhook.deliver': (payload) =>
          attemptDelivery(services, payload, { ca: server.ca, random: () => 0.5 }),
      },
      { concurrency: 2 },
    );
    return { t, orgId };
  });

describe('one attempt at a time (private targets allowed)', () => {
  test('sends a signed POST that a receiver verifies over the raw bytes, and logs success', async ({
    direct: { t, orgId, queue, options },
    receiver,
  }) => {
    const f = await insertDelivery(t, orgId, receiver);
    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, options);

    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0];
    expect(req?.method).toBe('POST');
    expect(header(req, 'content-type')).toBe('application/json');
    expect(header(req, 'user-agent')).toBe(WEBHOOK_USER_AGENT);
    expect(header(req, 'x-crm-event')).toBe('lead.created');
    expect(header(req, 'x-crm-delivery-id')).toBe(f.deliveryId);
    expect(header(req, 'webhook-id')).toBe(f.deliveryId);
    expect(header(req, 'x-crm-signature')).toMatch(/^[0-9a-f]{64}$/);

    const raw = req?.body ?? Buffer.alloc(0);
    expect(verifyWebhookSignature(raw, header(req, 'x-crm-signature'), SECRET)).toBe(true);
    expect(verifyWebhookSignature(raw, header(req, 'x-crm-signature'), `${SECRET}x`)).toBe(false);
    const standard = {
      id: header(req, 'webhook-id'),
      timestamp: header(req, 'webhook-timestamp'),
      signature: header(req, 'webhook-signature'),
    };
    expect(verifyStandardWebhook(raw, standard, SECRET)).toBe(true);
    expect(verifyStandardWebhook(raw, standard, `${SECRET}x`)).toBe(false);

    const body = JSON.parse(raw.toString('utf8'));
    expect(Object.keys(body).sort()).toEqual(['data', 'event', 'org_id', 'timestamp']);
    expect(body).toMatchObject({ event: 'lead.created', org_id: orgId, data: f.data });
    const sentAt = Date.parse(body.timestamp);
    expect(Math.abs(Date.now() - sentAt)).toBeLessThan(10_000);
    expect(Number(standard.timestamp)).toBe(Math.floor(sentAt / 1000));

    const row = await loadDelivery(t, f.deliveryId);
    expect(row.status).toBe('succeeded');
    expect(row.nextAttemptAt).toBeNull();
    expect(row.attempts).toHaveLength(1);
    expect(row.attempts[0]).toMatchObject({
      status_code: 200,
      error: null,
      response_excerpt: 'ok',
      next_attempt_at: null,
    });
    expect(row.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(0);
    expect(queue.jobs).toHaveLength(0);
  });

  test('a second delivery to the same receiver reuses the kept-alive TLS connection', async ({
    direct: { t, orgId, options },
    receiver,
  }) => {
    const first = await insertDelivery(t, orgId, receiver);
    const second = await insertDelivery(t, orgId, receiver);
    await attemptDelivery(t.services, { deliveryId: first.deliveryId }, options);
    // The first may have reused a connection an earlier test left warm; never more than one handshake.
    const handshakes = receiver.tlsSessions;
    expect(handshakes).toBeLessThanOrEqual(1);
    await attemptDelivery(t.services, { deliveryId: second.deliveryId }, options);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.tlsSessions).toBe(handshakes);
    expect((await loadDelivery(t, second.deliveryId)).status).toBe('succeeded');
  });

  test('retries after failures on the configured schedule with jitter, then fails for good', async ({
    direct: { t, orgId, queue, options },
    receiver,
  }) => {
    const f = await insertDelivery(t, orgId, receiver);
    receiver.respondWith({ status: 500, body: 'boom' }, { status: 503 }, { status: 500 });

    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, { ...options, random: () => 0 });
    let row = await loadDelivery(t, f.deliveryId);
    expect(row.status).toBe('pending');
    expect(row.attempts[0]).toMatchObject({ status_code: 500, error: 'http_500', response_excerpt: 'boom' });
    expect(row.nextAttemptAt).not.toBeNull();
    expect(row.attempts[0]?.next_attempt_at).toBe(row.nextAttemptAt?.toISOString());
    // 200 ms minus the full 10% jitter.
    expect(queue.jobs).toEqual([
      { payload: { deliveryId: f.deliveryId }, options: { delayMs: 180, jobId: `${f.deliveryId}:2` } },
    ]);

    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, { ...options, random: () => 0.9999999 });
    row = await loadDelivery(t, f.deliveryId);
    expect(row.status).toBe('pending');
    expect(row.attempts[1]).toMatchObject({ status_code: 503, error: 'http_503' });
    expect(queue.jobs[1]).toEqual({
      payload: { deliveryId: f.deliveryId },
      options: { delayMs: 440, jobId: `${f.deliveryId}:3` },
    });

    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, options);
    row = await loadDelivery(t, f.deliveryId);
    expect(row.status).toBe('failed');
    expect(row.nextAttemptAt).toBeNull();
    expect(row.attempts).toHaveLength(3);
    expect(row.attempts[2]).toMatchObject({ status_code: 500, error: 'http_500', next_attempt_at: null });
    expect(queue.jobs).toHaveLength(2);

    // A stray job for a finished delivery makes no request.
    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, options);
    expect(receiver.requests).toHaveLength(3);
    expect((await loadDelivery(t, f.deliveryId)).attempts).toHaveLength(3);
  });

  test('stores at most 1,000 characters of the answer', async ({
    direct: { t, orgId, options },
    receiver,
  }) => {
    const f = await insertDelivery(t, orgId, receiver);
    receiver.respondWith({ status: 422, body: 'x'.repeat(100_000) });
    await attemptDelivery(t.services, { deliveryId: f.deliveryId, single: true }, options);
    const row = await loadDelivery(t, f.deliveryId);
    expect(row.attempts[0]?.error).toBe('http_422');
    expect(row.attempts[0]?.response_excerpt).toBe('x'.repeat(1000));
  });

  test('does not follow a redirect: a 3xx is a failure', async ({
    direct: { t, orgId, options },
    receiver,
  }) => {
    const f = await insertDelivery(t, orgId, receiver);
    receiver.respondWith({ redirectTo: '/elsewhere' });
    await attemptDelivery(t.services, { deliveryId: f.deliveryId, single: true }, options);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.hits('/hook')).toHaveLength(1);
    expect(receiver.hits('/elsewhere')).toHaveLength(0);
    const row = await loadDelivery(t, f.deliveryId);
    expect(row.status).toBe('failed');
    expect(row.attempts[0]).toMatchObject({ status_code: 302, error: 'redirect' });
  });

  test('cuts slow response headers at the deadline', async ({ direct: { t, orgId, options }, receiver }) => {
    const f = await insertDelivery(t, orgId, receiver);
    receiver.respondWith({ headersDelayMs: 3000 });
    const started = Date.now();
    await attemptDelivery(t.services, { deliveryId: f.deliveryId, single: true }, options);
    expect(Date.now() - started).toBeLessThan(2500);
    const row = await loadDelivery(t, f.deliveryId);
    expect(row.attempts[0]).toMatchObject({ status_code: null, error: 'timeout' });
    expect(row.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(900);
    expect(row.attempts[0]?.duration_ms).toBeLessThan(2000);
  });

  test('cuts a slowly trickled body at the same deadline, even after a 200', async ({
    direct: { t, orgId, options },
    receiver,
  }) => {
    const f = await insertDelivery(t, orgId, receiver);
    receiver.respondWith({ status: 200, trickleBodyMs: 4000 });
    const started = Date.now();
    await attemptDelivery(t.services, { deliveryId: f.deliveryId, single: true }, options);
    expect(Date.now() - started).toBeLessThan(2500);
    const row = await loadDelivery(t, f.deliveryId);
    expect(row.status).toBe('failed');
    expect(row.attempts[0]).toMatchObject({ status_code: null, error: 'timeout' });
    expect(row.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(900);
    expect(row.attempts[0]?.duration_ms).toBeLessThan(2000);
  });

  test('reports an untrusted certificate as tls and a closed port as network', async ({
    direct: { t, orgId, options },
    receiver,
  }) => {
    const untrusted = await insertDelivery(t, orgId, receiver);
    await attemptDelivery(t.services, { deliveryId: untrusted.deliveryId, single: true }, {});
    expect((await loadDelivery(t, untrusted.deliveryId)).attempts[0]?.error).toBe('tls');

    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        const free = typeof address === 'object' && address !== null ? address.port : 0;
        server.close(() => resolve(free));
      });
    });
    const closed = await insertDelivery(t, orgId, receiver, { url: `https://127.0.0.1:${port}/hook` });
    await attemptDelivery(t.services, { deliveryId: closed.deliveryId, single: true }, options);
    expect((await loadDelivery(t, closed.deliveryId)).attempts[0]).toMatchObject({
      status_code: null,
      error: 'network',
    });
  });

  test('makes exactly one attempt for a single (test, replay) job, even for a delivered event', async ({
    direct: { t, orgId, queue, options },
    receiver,
  }) => {
    const f = await insertDelivery(t, orgId, receiver);
    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, options);
    // Another automatic job does nothing; a replay sends again.
    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, options);
    expect(receiver.requests).toHaveLength(1);
    await attemptDelivery(t.services, { deliveryId: f.deliveryId, single: true }, options);
    expect(receiver.requests).toHaveLength(2);
    expect(header(receiver.requests[1], 'x-crm-delivery-id')).toBe(f.deliveryId);
    expect((await loadDelivery(t, f.deliveryId)).status).toBe('succeeded');

    const failing = await insertDelivery(t, orgId, receiver);
    receiver.respondWith({ status: 500 });
    await attemptDelivery(t.services, { deliveryId: failing.deliveryId, single: true }, options);
    const row = await loadDelivery(t, failing.deliveryId);
    expect(row.status).toBe('failed');
    expect(row.attempts).toHaveLength(1);
    expect(row.attempts[0]?.next_attempt_at).toBeNull();
    expect(queue.jobs).toHaveLength(0);
  });

  test('signs every attempt afresh: new timestamp, new signatures, same delivery id', async ({
    direct: { t, orgId, options },
    receiver,
  }) => {
    const f = await insertDelivery(t, orgId, receiver);
    receiver.respondWith({ status: 500 });
    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, options);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, options);
    const [first, second] = receiver.requests;
    expect(header(second, 'x-crm-delivery-id')).toBe(header(first, 'x-crm-delivery-id'));
    expect(JSON.parse(second?.body.toString() ?? '{}').timestamp).not.toBe(
      JSON.parse(first?.body.toString() ?? '{}').timestamp,
    );
    expect(header(second, 'webhook-timestamp')).not.toBe(header(first, 'webhook-timestamp'));
    expect(header(second, 'x-crm-signature')).not.toBe(header(first, 'x-crm-signature'));
    expect(header(second, 'webhook-signature')).not.toBe(header(first, 'webhook-signature'));
    for (const req of [first, second]) {
      expect(verifyWebhookSignature(req?.body ?? '', header(req, 'x-crm-signature'), SECRET)).toBe(true);
    }
    expect((await loadDelivery(t, f.deliveryId)).status).toBe('succeeded');
  });

  test('sends nothing for an inactive subscription, except its test event', async ({
    direct: { t, orgId, options },
    receiver,
  }) => {
    const f = await insertDelivery(t, orgId, receiver, { isActive: false });
    await attemptDelivery(t.services, { deliveryId: f.deliveryId }, options);
    expect(receiver.requests).toHaveLength(0);
    const row = await loadDelivery(t, f.deliveryId);
    expect(row.status).toBe('failed');
    expect(row.attempts).toHaveLength(1);
    expect(row.attempts[0]).toMatchObject({ status_code: null, error: 'subscription_inactive' });

    const testEvent = await insertDelivery(t, orgId, receiver, {
      isActive: false,
      event: 'webhook.test',
    });
    await attemptDelivery(t.services, { deliveryId: testEvent.deliveryId, single: true }, options);
    expect(receiver.requests).toHaveLength(1);
    expect(header(receiver.requests[0], 'x-crm-event')).toBe('webhook.test');
    expect((await loadDelivery(t, testEvent.deliveryId)).status).toBe('succeeded');
  });

  test('ignores a job for a delivery that does not exist', async ({ direct: { t, options }, receiver }) => {
    await expect(attemptDelivery(t.services, { deliveryId: newId() }, options)).resolves.toBeUndefined();
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('private targets not allowed (the default)', () => {
  test.for([
    ['an IP literal', (r: HttpsReceiver) => r.url()],
    [
      'a name resolving to loopback',
      (r: HttpsReceiver) => `https://localhost:${new URL(r.origin).port}/hook`,
    ],
    ['a hex IPv4 spelling', (r: HttpsReceiver) => `https://0x7f.1:${new URL(r.origin).port}/hook`],
  ] as const)(
    'refuses %s as blocked_target without reaching it',
    async ([_label, url], { blocked: { t, orgId, logLines }, receiver }) => {
      const f = await insertDelivery(t, orgId, receiver, { url: url(receiver) });
      logLines.length = 0;
      await attemptDelivery(t.services, { deliveryId: f.deliveryId, single: true }, { ca: receiver.ca });
      expect(receiver.requests).toHaveLength(0);
      const row = await loadDelivery(t, f.deliveryId);
      expect(row.status).toBe('failed');
      expect(row.attempts[0]).toMatchObject({
        status_code: null,
        error: 'blocked_target',
        response_excerpt: null,
      });
      // The detailed reason is logged for the operator, the secret and signatures never are.
      const log = logLines.join('');
      expect(log).toMatch(/loopback/);
      expect(log).toContain(f.deliveryId);
      expect(log).not.toContain(SECRET);
      expect(log).not.toMatch(/[0-9a-f]{64}/);
    },
  );
});

describe('retries through the job queue', () => {
  test('delivers on the retry after a 500', async ({ retrying: { t, orgId }, receiver }) => {
    const f = await insertDelivery(t, orgId, receiver);
    receiver.respondWith({ status: 500 });
    await t.services.queue.enqueue('webhook.deliver', { deliveryId: f.deliveryId }, { jobId: f.deliveryId });
    const row = await waitForStatus(t, f.deliveryId, 'succeeded');
    expect(row.attempts.map((a) => a.status_code)).toEqual([500, 200]);
    const [first, second] = receiver.requests;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(200);
  });

  test('makes three attempts with growing gaps, then marks the delivery failed', async ({
    retrying: { t, orgId },
    receiver,
  }) => {
    const f = await insertDelivery(t, orgId, receiver);
    receiver.setFallback({ status: 500, body: 'down' });
    await t.services.queue.enqueue('webhook.deliver', { deliveryId: f.deliveryId }, { jobId: f.deliveryId });
    const row = await waitForStatus(t, f.deliveryId, 'failed');
    expect(row.attempts).toHaveLength(3);
    expect(row.attempts.map((a) => a.error)).toEqual(['http_500', 'http_500', 'http_500']);
    expect(row.nextAttemptAt).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(receiver.requests).toHaveLength(3);
    const [a, b, c] = receiver.requests.map((r) => r.receivedAt);
    expect((b ?? 0) - (a ?? 0)).toBeGreaterThanOrEqual(200);
    expect((c ?? 0) - (b ?? 0)).toBeGreaterThanOrEqual(400);
    expect(new Set(receiver.requests.map((r) => header(r, 'x-crm-delivery-id')))).toEqual(
      new Set([f.deliveryId]),
    );
  });
});
