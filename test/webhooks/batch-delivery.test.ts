// Locks in the relay's batches against a real HTTPS receiver: the relay names a subscription's new
// deliveries in 'webhook.deliver_batch' jobs of at most DELIVERY_BATCH_MAX, and a batch makes the
// first attempt of each, signed as any attempt, records every outcome with the same log entries and
// retry schedule as one attempt at a time, leaves alone what was attempted already (a job run again
// after a crash, a sweep's job), and never lets a wait for a connection eat a request's deadline.
import { eq, inArray } from 'drizzle-orm';
import { describe, expect, vi } from 'vitest';
import { outboxEvents } from '../../core/db/schema.ts';
import { newId, OBJECT_ID_PATTERN } from '../../core/ids.ts';
import { attemptDeliveryBatch, DELIVERY_BATCH_MAX } from '../../tools/webhooks/deliver.ts';
import { relayOutbox } from '../../tools/webhooks/relay.ts';
import { verifyStandardWebhook, verifyWebhookSignature } from '../../tools/webhooks/signing.ts';
import { webhookDeliveries } from '../../tools/webhooks/tables.ts';
import { fileTest, type TestContext } from '../fixtures/index.ts';
import { recordQueueForFile, resetReceiver, startReceiverForFile } from '../fixtures/webhook-receiver.ts';
import { seedWebhook, seedWebhookDelivery } from './kit.ts';

/** The delivery deadline of this file, and how long the receiver takes to answer in the connection test. */
const DEADLINE_MS = 4000;
const ANSWER_MS = 2500;
/** Connections per receiver origin in this file: few, so a wave costs few TLS handshakes on a busy machine. */
const CONNECTIONS = 4;

const SECRET = 'whsec_YmF0Y2gtZGVsaXZlcnktdGVzdC1zZWNyZXQ=';

const test = fileTest({
  env: {
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_DELAYS_MS: '200,400',
    WEBHOOK_TIMEOUT_MS: String(DEADLINE_MS),
    WEBHOOK_CONNECTIONS_PER_ORIGIN: String(CONNECTIONS),
  },
  plan: 'starter',
})
  .extend('server', { scope: 'file' }, startReceiverForFile)
  .extend('receiver', resetReceiver)
  .extend('recording', { scope: 'file' }, recordQueueForFile)
  .extend('queue', async ({ recording }) => {
    recording.jobs.length = 0;
    return recording;
  });

async function pendingDeliveries(t: TestContext, orgId: string, webhookId: string, n: number) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(
      await seedWebhookDelivery(t, { orgId }, { webhookId, data: { _id: newId(), name: `Lead ${i}` } }),
    );
  return ids;
}

async function rowsOf(t: TestContext, ids: string[]) {
  const rows = await t.services.db.system
    .select()
    .from(webhookDeliveries)
    .where(inArray(webhookDeliveries.id, ids));
  return new Map(rows.map((row) => [row.id, row]));
}

const header = (value: string | string[] | undefined): string => (typeof value === 'string' ? value : '');

describe('webhook.deliver_batch', () => {
  test('sends each delivery signed with its own id, and logs one attempt per delivery with the retry schedule', async ({
    t,
    org,
    receiver,
    queue,
  }) => {
    const webhookId = await seedWebhook(t, org, { url: receiver.url(), secret: SECRET });
    const ids = await pendingDeliveries(t, org.orgId, webhookId, 5);
    // The first request to arrive fails; which delivery it carries is up to the race.
    receiver.respondWith({ status: 500, body: 'boom' });

    await attemptDeliveryBatch(t.services, { deliveryIds: ids }, { ca: receiver.ca, random: () => 0 });

    expect(receiver.requests).toHaveLength(5);
    const sent = receiver.requests.map((req) => header(req.headers['x-crm-delivery-id']));
    expect([...sent].sort()).toEqual([...ids].sort());
    for (const req of receiver.requests) {
      expect(verifyWebhookSignature(req.body, header(req.headers['x-crm-signature']), SECRET)).toBe(true);
      const standard = {
        id: header(req.headers['webhook-id']),
        timestamp: header(req.headers['webhook-timestamp']),
        signature: header(req.headers['webhook-signature']),
      };
      expect(standard.id).toBe(header(req.headers['x-crm-delivery-id']));
      expect(verifyStandardWebhook(req.body, standard, SECRET)).toBe(true);
      expect(JSON.parse(req.body.toString('utf8'))).toMatchObject({
        event: 'lead.created',
        org_id: org.orgId,
      });
    }

    const failedId = sent[0] ?? '';
    const rows = await rowsOf(t, ids);
    for (const id of ids) {
      const row = rows.get(id);
      expect(row?.attempts).toHaveLength(1);
      if (id === failedId) {
        expect(row?.status).toBe('pending');
        expect(row?.attempts[0]).toMatchObject({
          status_code: 500,
          error: 'http_500',
          response_excerpt: 'boom',
        });
        expect(row?.attempts[0]?.next_attempt_at).toBe(row?.nextAttemptAt?.toISOString());
      } else {
        expect(row?.status).toBe('succeeded');
        expect(row?.nextAttemptAt).toBeNull();
        expect(row?.attempts[0]).toMatchObject({ status_code: 200, error: null, next_attempt_at: null });
      }
    }
    // The failed one's second attempt: 200 ms minus the full 10% jitter, named after the attempt.
    expect(queue.jobs).toEqual([
      { payload: { deliveryId: failedId }, options: { delayMs: 180, jobId: `${failedId}:2` } },
    ]);
  });

  test('leaves alone what was attempted already, so a batch run again sends nothing twice', async ({
    t,
    org,
    receiver,
    queue,
  }) => {
    const webhookId = await seedWebhook(t, org, { url: receiver.url(), secret: SECRET });
    const [fresh = '', retrying = '', done = ''] = await pendingDeliveries(t, org.orgId, webhookId, 3);
    const earlier = {
      at: new Date().toISOString(),
      status_code: 500,
      error: 'http_500',
      duration_ms: 3,
      response_excerpt: null,
      next_attempt_at: new Date(Date.now() + 60_000).toISOString(),
    };
    // A delivery waiting for its second attempt, and one delivered by a sweep's job meanwhile.
    await t.services.db.system
      .update(webhookDeliveries)
      .set({ attempts: [earlier], nextAttemptAt: new Date(Date.now() + 60_000) })
      .where(eq(webhookDeliveries.id, retrying));
    await t.services.db.system
      .update(webhookDeliveries)
      .set({ status: 'succeeded', attempts: [{ ...earlier, status_code: 200, error: null }] })
      .where(eq(webhookDeliveries.id, done));

    const batch = { deliveryIds: [fresh, retrying, done, newId()] };
    await attemptDeliveryBatch(t.services, batch, { ca: receiver.ca });
    expect(receiver.requests.map((r) => r.headers['x-crm-delivery-id'])).toEqual([fresh]);
    let rows = await rowsOf(t, [fresh, retrying, done]);
    expect(rows.get(fresh)?.status).toBe('succeeded');
    expect(rows.get(retrying)).toMatchObject({ status: 'pending', attempts: [earlier] });
    expect(rows.get(done)?.attempts).toHaveLength(1);

    // The same job again (its worker died after the outcome committed): no request, no entry.
    await attemptDeliveryBatch(t.services, batch, { ca: receiver.ca });
    expect(receiver.requests).toHaveLength(1);
    rows = await rowsOf(t, [fresh]);
    expect(rows.get(fresh)?.attempts).toHaveLength(1);
    expect(queue.jobs).toHaveLength(0);
  });

  test('logs the deliveries of a deactivated subscription as failed without a request', async ({
    t,
    org,
    receiver,
  }) => {
    const active = await seedWebhook(t, org, { url: receiver.url(), secret: SECRET });
    const inactive = await seedWebhook(t, org, {
      url: receiver.url('/off'),
      secret: SECRET,
      isActive: false,
    });
    const [on = ''] = await pendingDeliveries(t, org.orgId, active, 1);
    const [off = ''] = await pendingDeliveries(t, org.orgId, inactive, 1);
    await attemptDeliveryBatch(t.services, { deliveryIds: [on, off] }, { ca: receiver.ca });
    expect(receiver.hits('/off')).toHaveLength(0);
    expect(receiver.hits('/hook')).toHaveLength(1);
    const rows = await rowsOf(t, [on, off]);
    expect(rows.get(on)?.status).toBe('succeeded');
    expect(rows.get(off)).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(rows.get(off)?.attempts).toEqual([
      expect.objectContaining({ status_code: null, error: 'subscription_inactive', next_attempt_at: null }),
    ]);
  });

  test('waits for a connection before it signs and its deadline starts: more deliveries than connections all succeed', async ({
    t,
    org,
    receiver,
  }) => {
    const webhookId = await seedWebhook(t, org, { url: receiver.url(), secret: SECRET });
    // Two waves: twice as many deliveries as the file's connections per origin.
    const ids = await pendingDeliveries(t, org.orgId, webhookId, 2 * CONNECTIONS);
    // Each answer takes 2.5 of the deadline's 4 seconds (1.5 s to spare on a loaded machine).
    // CONNECTIONS go at once; the rest would pass their deadline if it had started while they
    // waited for the first wave (2 x 2.5 s > 4 s).
    receiver.setFallback({ status: 204, headersDelayMs: ANSWER_MS });
    const started = Date.now();
    await attemptDeliveryBatch(t.services, { deliveryIds: ids }, { ca: receiver.ca });
    const elapsed = Date.now() - started;

    const rows = await rowsOf(t, ids);
    const outcomes = ids.map((id) => rows.get(id)?.attempts.map((a) => a.error ?? a.status_code));
    expect(outcomes).toEqual(ids.map(() => [204]));
    expect(elapsed).toBeGreaterThanOrEqual(2 * ANSWER_MS);
    const arrivals = receiver.requests.map((r) => r.receivedAt).sort((a, b) => a - b);
    expect(arrivals).toHaveLength(2 * CONNECTIONS);
    // Signed when sent, not when the batch started: signed at the start, the second wave would arrive
    // 2.5 s after its timestamp (whole seconds: up to 1 s of lag is rounding).
    const lag = receiver.requests.map((r) => r.receivedAt - 1000 * Number(r.headers['webhook-timestamp']));
    expect(lag.filter((ms) => ms < 0 || ms >= 2000)).toEqual([]);
    // Never more than CONNECTIONS in flight: the next one arrived only once the first answers were out.
    expect((arrivals[CONNECTIONS] ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(ANSWER_MS - 50);
  });
});

describe('the relay', () => {
  test('names the new deliveries in batch jobs of one subscription and at most DELIVERY_BATCH_MAX each', async ({
    t,
  }) => {
    const org = await t.createOrg({ plan: 'starter', name: 'Relayed' });
    const first = await seedWebhook(t, org, { events: ['lead.created'] });
    const second = await seedWebhook(t, org, { events: ['lead.created'] });
    const events = DELIVERY_BATCH_MAX + 20;
    await t.services.db.system.insert(outboxEvents).values(
      Array.from({ length: events }, (_, i) => ({
        id: newId(),
        orgId: org.orgId,
        event: 'lead.created',
        data: { _id: newId(), name: `Lead ${i}` },
      })),
    );
    const enqueueMany = vi.spyOn(t.services.jobs, 'enqueueMany').mockResolvedValue(undefined);
    let created: string[];
    let calls: typeof enqueueMany.mock.calls;
    try {
      created = await relayOutbox(t.services, { batchSize: 1000 });
      calls = [...enqueueMany.mock.calls];
    } finally {
      enqueueMany.mockRestore();
    }
    expect(calls).toHaveLength(1);
    const [name, jobs] = calls[0] ?? [];
    expect(name).toBe('webhook.deliver_batch');
    const batches = (jobs ?? []).map((job) => (job.payload as { deliveryIds: string[] }).deliveryIds);
    expect(batches.flat().sort()).toEqual([...created].sort());
    // Made in the relay's statement, in the ObjectId form of every id.
    expect(created.filter((id) => !OBJECT_ID_PATTERN.test(id))).toEqual([]);
    expect(new Set(created).size).toBe(created.length);
    const rows = await rowsOf(t, created);
    const ours = batches.filter((ids) => [first, second].includes(rows.get(ids[0] ?? '')?.webhookId ?? ''));
    expect(ours.map((ids) => ids.length).sort((a, b) => a - b)).toEqual([20, 20, 100, 100]);
    for (const ids of batches) expect(new Set(ids.map((id) => rows.get(id)?.webhookId)).size).toBe(1);
    for (const webhookId of [first, second]) {
      const mine = [...rows.values()].filter((row) => row.webhookId === webhookId);
      expect(mine).toHaveLength(events);
      expect(mine.every((row) => row.status === 'pending' && row.attempts.length === 0)).toBe(true);
    }
  });
});
