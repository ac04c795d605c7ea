// The delivery jobs. 'webhook.deliver' makes one HTTP attempt of one delivery (a retry, a sweep's
// wake-up, the test endpoint, a replay); 'webhook.deliver_batch' makes the first attempt of each
// delivery the relay created for one subscription in one pass. Every attempt signs a fresh body (new
// timestamp), goes through the SSRF-guarded pools of tools/webhooks/ssrf.ts (a warm keep-alive
// connection to the receiver's checked address), and is bounded by one hard deadline covering the
// DNS check, connect, headers and body, so a receiver that trickles its answer cannot hold a worker.
// Whatever the number of deliveries, a job costs two statements: one reads the deliveries with their
// subscriptions, one appends each attempt to its log and sets each delivery's state. Failed
// attempts due a retry are enqueued together, one 'webhook.deliver' job each, named after the attempt.
import { setMaxListeners } from 'node:events';
import { and, eq, lte, sql } from 'drizzle-orm';
import { type Dispatcher, request } from 'undici';
import { z } from 'zod';
import { rowsOf } from '../../core/db/sql.ts';
import { type JobHandlers, type Sweep, singleAttemptJob } from '../../core/jobs.ts';
import { SWEEP_BATCH, sweepCutoff, wakeDue } from '../../core/leased-rows.ts';
import type { Services } from '../../core/services.ts';
import { type WebhookSigner, webhookSigner } from './signing.ts';
import {
  BlockedTargetError,
  createDeliveryDispatchers,
  type DeliveryDispatchers,
  parseTargetUrl,
  type ValidTarget,
} from './ssrf.ts';
import { type DeliveryAttempt, webhookDeliveries, webhooks } from './tables.ts';

const deliverPayload = z.object({
  deliveryId: z.string().describe('The delivery to attempt'),
  single: z.boolean().optional().describe('One attempt, no retries'),
});

/** Deliveries one batch job names at most (the relay cuts a subscription's new deliveries to this). */
export const DELIVERY_BATCH_MAX = 100;

const deliverBatchPayload = z.object({
  deliveryIds: z
    .array(z.string())
    .min(1)
    .max(DELIVERY_BATCH_MAX)
    .describe('Deliveries due their first attempt (the relay names those of one subscription)'),
});

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /**
     * Make the next attempt of one webhook delivery. `single`: exactly one attempt and no retries
     * (the test endpoint and replays).
     */
    'webhook.deliver': z.output<typeof deliverPayload>;
    /**
     * Make the first attempt of each of these deliveries, concurrently, and record every outcome in
     * one statement. A delivery already attempted (or no longer pending) is left alone, so a job run
     * again after a crash sends only what was never recorded. Retries are 'webhook.deliver' jobs.
     */
    'webhook.deliver_batch': z.output<typeof deliverBatchPayload>;
  }
}

/** The fixed agent string of the webhook sender (specification: Delivery request). */
export const WEBHOOK_USER_AGENT = 'CRM-Webhooks/1.0 (+https://example.invalid/docs/webhooks)';

/** At most this much of a receiver's answer is read; the rest is discarded. */
const RESPONSE_READ_LIMIT = 64 * 1024;
/** What the delivery log keeps of the answer. */
const EXCERPT_CHARS = 1000;
/** Retry delays vary by up to this fraction either way, so failed deliveries do not retry in lockstep. */
const JITTER = 0.1;

export interface DeliveryOptions {
  /**
   * PEM certificate(s) to trust instead of the system roots. Only tests use it (their local
   * receiver's self-signed certificate); deployments use the system roots plus NODE_EXTRA_CA_CERTS.
   */
  ca?: string;
  /** The randomness of the retry jitter, in [0, 1); 0.5 means none. Tests pin it. */
  random?: () => number;
}

interface Outcome {
  statusCode: number | null;
  /** null on success; otherwise the failure kind stored in the log. */
  error: string | null;
  durationMs: number;
  excerpt: string | null;
  /** Why a target was refused or a connection failed: for the server log only. */
  detail?: string;
}

function errorCode(err: unknown): string {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if ('code' in current && typeof current.code === 'string') return current.code;
    current = current.cause;
  }
  return '';
}

function findBlocked(err: unknown): BlockedTargetError | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof BlockedTargetError) return current;
    current = current.cause;
  }
  return null;
}

const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED|SELF_SIGNED_CERT|HOSTNAME_MISMATCH)/;
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

function classifyError(err: unknown, deadline: AbortSignal): { error: string; detail: string } {
  const detail = err instanceof Error ? `${errorCode(err) || err.name}: ${err.message}` : String(err);
  const blocked = findBlocked(err);
  if (blocked) return { error: 'blocked_target', detail: blocked.message };
  if (deadline.aborted) return { error: 'timeout', detail };
  const code = errorCode(err);
  if (TIMEOUT_CODES.has(code)) return { error: 'timeout', detail };
  if (TLS_CODE.test(code)) return { error: 'tls', detail };
  return { error: 'network', detail };
}

/** What a 204 or 304 carries: HTTP gives them no body. */
const NO_BODY = Buffer.alloc(0);

/**
 * The receiver's answer, at most RESPONSE_READ_LIMIT bytes. Most receivers answer 204, or a short
 * body whose Content-Length says it fits: those are read by undici's own body reader in one go
 * (HTTP/1.1 framing holds a body to its declared length), which costs a fraction of iterating the
 * stream; an unsized or longer answer is read chunk by chunk and cut at the limit.
 */
async function readAnswer(res: Dispatcher.ResponseData): Promise<Buffer> {
  if (res.statusCode === 204 || res.statusCode === 304) {
    await res.body.dump();
    return NO_BODY;
  }
  const declared = res.headers['content-length'];
  const length = typeof declared === 'string' ? Number(declared) : Number.NaN;
  if (Number.isSafeInteger(length) && length < RESPONSE_READ_LIMIT) {
    return Buffer.from(await res.body.arrayBuffer());
  }
  const answer = await readLimited(res.body, RESPONSE_READ_LIMIT);
  // A body cut at the cap leaves unread bytes: drop that connection rather than reuse it.
  if (answer.length >= RESPONSE_READ_LIMIT) res.body.destroy();
  return answer;
}

/** Reads at most `limit` bytes of a body, then stops reading. */
async function readLimited(body: AsyncIterable<unknown>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buf);
    size += buf.length;
    if (size >= limit) break;
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

/** `work`, or the deadline's abort reason once it passes first (a DNS answer cannot be cancelled). */
function beforeDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  if (deadline.aborted) return Promise.reject(deadline.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(deadline.reason);
    deadline.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        deadline.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        deadline.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * At most `max` holders at once; the others wait in arrival order. It keeps the requests in flight
 * to one origin within its pool's connections, so a batch waits here, before its deadline starts,
 * and never inside the pool, where the wait would count against the receiver's 15 seconds.
 */
class Slots {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  acquire(): Promise<void> | undefined {
    if (this.active < this.max) {
      this.active++;
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the slot to the next waiter, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }
}

/** The slots of each origin a process is sending to, per services object; an idle origin's are dropped. */
const originSlots = new WeakMap<Services, Map<string, Slots>>();

async function withOriginSlot<T>(services: Services, origin: string, work: () => Promise<T>): Promise<T> {
  let byOrigin = originSlots.get(services);
  if (!byOrigin) {
    byOrigin = new Map();
    originSlots.set(services, byOrigin);
  }
  let slots = byOrigin.get(origin);
  if (!slots) {
    slots = new Slots(services.config.webhookConnectionsPerOrigin);
    byOrigin.set(origin, slots);
  }
  const wait = slots.acquire();
  if (wait) await wait;
  try {
    return await work();
  } finally {
    slots.release();
    if (slots.idle) byOrigin.delete(origin);
  }
}

/**
 * The deadlines of the sends that start close together: one AbortSignal per time slice, firing
 * `timeoutMs` + the slice after the slice began, so every send has at least its timeout and at most
 * a slice more (100 ms of 15 s by default). A signal, a timer and its bookkeeping made per send
 * (AbortSignal.timeout) were about 7% of a delivery's CPU in bench:webhooks; many sends listen to
 * one signal now, each removing its listener when done.
 */
class SharedDeadlines {
  private readonly sliceMs: number;
  private current: { signal: AbortSignal; until: number } | null = null;

  constructor(private readonly timeoutMs: number) {
    this.sliceMs = Math.max(1, Math.min(DEADLINE_SLICE_MS, Math.floor(timeoutMs / 10)));
  }

  /** The deadline of a send starting now. */
  signal(): AbortSignal {
    const now = performance.now();
    if (this.current && now < this.current.until) return this.current.signal;
    const signal = AbortSignal.timeout(this.timeoutMs + this.sliceMs);
    // Every send of the slice listens to it at once: no leak warning for that.
    setMaxListeners(0, signal);
    this.current = { signal, until: now + this.sliceMs };
    return signal;
  }
}

/** The longest slice whose sends share a deadline (at most a tenth of the timeout). */
const DEADLINE_SLICE_MS = 100;

/** Each services object's shared deadlines (its config's timeout). */
const sharedDeadlines = new WeakMap<Services, SharedDeadlines>();

function deadlineOfSend(services: Services): AbortSignal {
  let deadlines = sharedDeadlines.get(services);
  if (!deadlines) {
    deadlines = new SharedDeadlines(services.config.webhookTimeoutMs);
    sharedDeadlines.set(services, deadlines);
  }
  return deadlines.signal();
}

async function send(
  services: Services,
  target: ValidTarget,
  headers: Record<string, string>,
  body: Buffer,
  options: DeliveryOptions,
): Promise<Outcome> {
  const timeoutMs = services.config.webhookTimeoutMs;
  const deadline = deadlineOfSend(services);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    // The target's host is resolved and checked here (BlockedTargetError when refused); a host
    // resolved moments ago needs no lookup, so no wait.
    const dispatchers = deliveryDispatchers(services, options.ca);
    const dispatcher =
      dispatchers.knownDispatcherFor(target) ??
      (await beforeDeadline(dispatchers.dispatcherFor(target), deadline));
    // undici 7 follows no redirects unless a redirect interceptor is composed in: a 3xx comes back as is.
    const res = await request(target.url, {
      method: 'POST',
      headers,
      body,
      dispatcher,
      signal: deadline,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const answer = await readAnswer(res);
    const excerpt = answer.toString('utf8').slice(0, EXCERPT_CHARS);
    const status = res.statusCode;
    if (status >= 200 && status < 300)
      return { statusCode: status, error: null, durationMs: elapsed(), excerpt };
    const error = status >= 300 && status < 400 ? 'redirect' : `http_${status}`;
    return { statusCode: status, error, durationMs: elapsed(), excerpt };
  } catch (err) {
    const { error, detail } = classifyError(err, deadline);
    return { statusCode: null, error, durationMs: elapsed(), excerpt: null, detail };
  }
}

/**
 * The guarded pools of a process, per services object (and test CA): every worker of the process
 * shares them, so attempts to one receiver reuse its kept-alive connections instead of paying a TLS
 * handshake each (tools/webhooks/ssrf.ts says how the SSRF check holds across reuse).
 */
const dispatchers = new WeakMap<Services, Map<string, DeliveryDispatchers>>();

function deliveryDispatchers(services: Services, ca: string | undefined): DeliveryDispatchers {
  let byCa = dispatchers.get(services);
  if (!byCa) {
    byCa = new Map();
    dispatchers.set(services, byCa);
  }
  const key = ca ?? '';
  let set = byCa.get(key);
  if (!set) {
    set = createDeliveryDispatchers({
      allowPrivate: services.config.webhookAllowPrivateTargets,
      connectTimeoutMs: services.config.webhookTimeoutMs,
      connectionsPerPool: services.config.webhookConnectionsPerOrigin,
      ...(ca === undefined ? {} : { ca }),
    });
    byCa.set(key, set);
  }
  return set;
}

/** What an attempt needs of a delivery and its subscription, read in one statement. */
interface DueDelivery {
  id: string;
  orgId: string;
  webhookId: string;
  event: string;
  data: Record<string, unknown>;
  status: string;
  /** Attempts already in the log (the log itself is not read: the update appends in SQL). */
  attemptCount: number;
  /** null when the subscription is gone. */
  webhook: { url: string; secret: string; isActive: boolean } | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOf(row: Record<string, unknown>, key: string): string {
  const value = row[key];
  if (typeof value !== 'string') throw new Error(`webhook delivery row: ${key} is not a string`);
  return value;
}

function nullableStringOf(row: Record<string, unknown>, key: string): string | null {
  const value = row[key];
  return value === null ? null : stringOf(row, key);
}

/** The event's data as jsonb comes back: parsed by the driver (pg), or as text (decoded here, as drizzle's jsonb column does). */
function dataOf(row: Record<string, unknown>): Record<string, unknown> {
  const raw = row.data;
  const value: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
  if (!isRecord(value)) throw new Error('webhook delivery row: data is not an object');
  return value;
}

/**
 * The deliveries joined to their subscriptions (same organization), in one round trip. Written as
 * one statement and read by hand: a batch reads up to DELIVERY_BATCH_MAX rows, and the query
 * builder's per-row, per-field mapping was a visible share of a delivery's CPU.
 */
async function loadDueDeliveries(services: Services, deliveryIds: readonly string[]): Promise<DueDelivery[]> {
  const d = webhookDeliveries;
  const w = webhooks;
  const rows = rowsOf(
    await services.db.system.execute(sql`
      select ${d.id} as id, ${d.orgId} as org_id, ${d.webhookId} as webhook_id, ${d.event} as event,
             ${d.data} as data, ${d.status} as status,
             jsonb_array_length(${d.attempts})::int as attempt_count,
             ${w.url} as url, ${w.secret} as secret, ${w.isActive} as is_active
      from ${d}
      left join ${w} on ${w.id} = ${d.webhookId} and ${w.orgId} = ${d.orgId}
      where ${d.id} = any(${sql.param([...deliveryIds])}::text[])`),
  );
  return rows.map((row) => {
    if (!isRecord(row)) throw new Error('webhook delivery row is not an object');
    const url = nullableStringOf(row, 'url');
    const secret = nullableStringOf(row, 'secret');
    const isActive = row.is_active;
    return {
      id: stringOf(row, 'id'),
      orgId: stringOf(row, 'org_id'),
      webhookId: stringOf(row, 'webhook_id'),
      event: stringOf(row, 'event'),
      data: dataOf(row),
      status: stringOf(row, 'status'),
      attemptCount: Number(row.attempt_count),
      webhook:
        url === null || secret === null || typeof isActive !== 'boolean' ? null : { url, secret, isActive },
    };
  });
}

function jitteredDelay(delayMs: number, random: () => number): number {
  return Math.max(0, Math.round(delayMs * (1 + (random() * 2 - 1) * JITTER)));
}

/** What one attempt decided: its log entry, the delivery's new state, the retry to enqueue and the log line. */
interface Decided {
  delivery: DueDelivery;
  attempt: DeliveryAttempt;
  status: 'succeeded' | 'pending' | 'failed';
  nextAttemptAt: Date | null;
  retry: { delayMs: number; jobId: string } | null;
  line: LogLine;
}

/**
 * An attempt's log line. Its fields are built only when the line is written: most deliveries
 * succeed, and a batch logs those at debug (finish), which production does not write.
 */
interface LogLine {
  /** A successful send: logged at the handler's level for those (info alone, debug in a batch). */
  delivered: boolean;
  level: 'info' | 'warn';
  fields: () => Record<string, unknown>;
  message: string;
}

/** A delivery of a deactivated subscription: logged as failed without a request. */
function inactive(delivery: DueDelivery): Decided {
  const attempt: DeliveryAttempt = {
    at: new Date().toISOString(),
    status_code: null,
    error: 'subscription_inactive',
    duration_ms: 0,
    response_excerpt: null,
    next_attempt_at: null,
  };
  return {
    delivery,
    attempt,
    status: 'failed',
    nextAttemptAt: null,
    retry: null,
    line: {
      delivered: false,
      level: 'info',
      fields: () => ({
        delivery_id: delivery.id,
        webhook_id: delivery.webhookId,
        event: delivery.event,
        error: attempt.error,
      }),
      message: 'webhook delivery not sent: subscription inactive',
    },
  };
}

/**
 * Signs a fresh body for this attempt and sends it; resolves with the outcome, never rejects. The
 * body is built and signed once the attempt holds one of its origin's connections, so its timestamp
 * is the send time however long the wait (receivers refuse a webhook-timestamp 5 minutes off).
 */
async function attempt(
  services: Services,
  delivery: DueDelivery,
  webhook: NonNullable<DueDelivery['webhook']>,
  signer: WebhookSigner,
  single: boolean,
  options: DeliveryOptions,
): Promise<Decided> {
  const target = parseTargetUrl(webhook.url);
  if (!target.ok) {
    const refused: Outcome = {
      statusCode: null,
      error: 'blocked_target',
      durationMs: 0,
      excerpt: null,
      detail: target.reason,
    };
    return decide(services, delivery, new Date(), refused, single, options);
  }
  return withOriginSlot(services, target.url.origin, async () => {
    const now = new Date();
    const timestampSeconds = Math.floor(now.getTime() / 1000);
    // Serialised once: the bytes signed are exactly the bytes sent.
    const body = Buffer.from(
      JSON.stringify({
        event: delivery.event,
        org_id: delivery.orgId,
        timestamp: now.toISOString(),
        data: delivery.data,
      }),
      'utf8',
    );
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      'x-crm-event': delivery.event,
      'x-crm-signature': signer.crm(body),
      'x-crm-delivery-id': delivery.id,
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestampSeconds),
      'webhook-signature': signer.standard(delivery.id, timestampSeconds, body),
    };
    const outcome = await send(services, target, headers, body, options);
    return decide(services, delivery, now, outcome, single, options);
  });
}

function decide(
  services: Services,
  delivery: DueDelivery,
  startedAt: Date,
  outcome: Outcome,
  single: boolean,
  options: DeliveryOptions,
): Decided {
  const delays = services.config.webhookRetryDelaysMs;
  const attemptNumber = delivery.attemptCount + 1;
  const totalAttempts = 1 + delays.length;
  const retryDelay = delays[attemptNumber - 1];
  const retry =
    outcome.error !== null && !single && attemptNumber < totalAttempts && retryDelay !== undefined;
  const delayMs = retry ? jitteredDelay(retryDelay, options.random ?? Math.random) : 0;
  const nextAttemptAt = retry ? new Date(Date.now() + delayMs) : null;
  // The reason a target was refused goes to the log only: the API shows the kind, never the address.
  const fields = () => ({
    delivery_id: delivery.id,
    webhook_id: delivery.webhookId,
    org_id: delivery.orgId,
    event: delivery.event,
    attempt: attemptNumber,
    single,
    status_code: outcome.statusCode,
    error: outcome.error,
    duration_ms: outcome.durationMs,
    ...(outcome.detail === undefined ? {} : { detail: outcome.detail }),
    ...(nextAttemptAt ? { next_attempt_at: nextAttemptAt.toISOString() } : {}),
  });
  return {
    delivery,
    attempt: {
      at: startedAt.toISOString(),
      status_code: outcome.statusCode,
      error: outcome.error,
      duration_ms: outcome.durationMs,
      response_excerpt: outcome.excerpt,
      next_attempt_at: nextAttemptAt?.toISOString() ?? null,
    },
    status: outcome.error === null ? 'succeeded' : retry ? 'pending' : 'failed',
    nextAttemptAt,
    // The next attempt's job is named after it, as the sweeper names it.
    retry: retry ? { delayMs, jobId: `${delivery.id}:${attemptNumber + 1}` } : null,
    line:
      outcome.error === null
        ? { delivered: true, level: 'info', fields, message: 'webhook delivered' }
        : {
            delivered: false,
            level: 'warn',
            fields,
            message: retry ? 'webhook delivery failed; will retry' : 'webhook delivery failed',
          },
  };
}

/**
 * Each attempt's log entry and each delivery's new state, in one statement (one round trip however
 * many deliveries). The entry is appended in SQL, so the log keeps every attempt even if two
 * writers ever overlap.
 */
async function record(services: Services, decided: readonly Decided[]): Promise<void> {
  if (decided.length === 0) return;
  const rows = decided.map((d) => ({
    id: d.delivery.id,
    status: d.status,
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    attempt: d.attempt,
  }));
  await services.db.system.execute(sql`
    update ${webhookDeliveries}
    set status = v.status,
        next_attempt_at = v.next_attempt_at,
        attempts = ${webhookDeliveries.attempts} || jsonb_build_array(v.attempt),
        updated_at = ${new Date().toISOString()}::timestamptz
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      as v(id text, status text, next_attempt_at timestamptz, attempt jsonb)
    where ${webhookDeliveries.id} = v.id`);
}

/**
 * Records, logs, then enqueues the retries (together): what every attempt ends with. A successful
 * send is logged at `deliveredLevel`; failures and refusals at their own level.
 */
async function finish(
  services: Services,
  decided: readonly Decided[],
  deliveredLevel: 'info' | 'debug' = 'info',
): Promise<void> {
  await record(services, decided);
  const { logger } = services;
  for (const { line } of decided) {
    const level = line.delivered ? deliveredLevel : line.level;
    if (logger.isLevelEnabled(level)) logger[level](line.fields(), line.message);
  }
  const retries = decided.flatMap((d) =>
    d.retry ? [{ payload: { deliveryId: d.delivery.id }, options: d.retry }] : [],
  );
  if (retries.length === 0) return;
  try {
    await services.queue.enqueueMany('webhook.deliver', retries);
  } catch (err) {
    // The rows stay pending with next_attempt_at set, so the sweeper re-enqueues them.
    services.logger.warn(
      { err, delivery_ids: retries.map((r) => r.payload.deliveryId) },
      'could not enqueue the next delivery attempts',
    );
  }
}

/**
 * The 'webhook.deliver' handler. Without `single` it makes the next automatic attempt (the n-th
 * attempt is the one after n-1 logged ones) and schedules the following; with `single` (test
 * endpoint, replay) it makes exactly one attempt whatever the status, and never retries.
 */
export async function attemptDelivery(
  services: Services,
  payload: z.output<typeof deliverPayload>,
  options: DeliveryOptions = {},
): Promise<void> {
  const { logger } = services;
  const single = payload.single === true;
  const [delivery] = await loadDueDeliveries(services, [payload.deliveryId]);
  if (!delivery) {
    logger.warn({ delivery_id: payload.deliveryId }, 'webhook delivery not found; job dropped');
    return;
  }
  // A finished delivery is only attempted again on request (replay); a stray retry job is a no-op.
  if (!single && delivery.status !== 'pending') {
    logger.debug({ delivery_id: delivery.id, status: delivery.status }, 'webhook delivery already final');
    return;
  }
  const webhook = delivery.webhook;
  if (!webhook) {
    logger.warn({ delivery_id: delivery.id }, 'webhook subscription not found; job dropped');
    return;
  }
  if (!webhook.isActive && delivery.event !== 'webhook.test') {
    await finish(services, [inactive(delivery)]);
    return;
  }
  await finish(services, [
    await attempt(services, delivery, webhook, webhookSigner(webhook.secret), single, options),
  ]);
}

/**
 * The 'webhook.deliver_batch' handler: the first attempt of each named delivery, sent concurrently
 * (at most WEBHOOK_CONNECTIONS_PER_ORIGIN at once per receiver's origin), recorded in one statement once
 * all have an outcome, retries enqueued together. Until that statement commits nothing is recorded,
 * so a worker that dies mid-batch leaves every delivery pending and the job, run again, sends them
 * again (at least once: receivers drop duplicates by webhook-id, the delivery id). A delivery
 * with an attempt in its log already, or no longer pending, was attempted elsewhere (a sweep's job,
 * an earlier run of this job that committed) and is skipped.
 */
export async function attemptDeliveryBatch(
  services: Services,
  payload: z.output<typeof deliverBatchPayload>,
  options: DeliveryOptions = {},
): Promise<void> {
  const { logger } = services;
  const ids = [...new Set(payload.deliveryIds)];
  const deliveries = await loadDueDeliveries(services, ids);
  if (deliveries.length < ids.length) {
    const found = new Set(deliveries.map((d) => d.id));
    logger.warn(
      { delivery_ids: ids.filter((id) => !found.has(id)) },
      'webhook deliveries not found; left out of the batch',
    );
  }
  const attempts: Array<Decided | Promise<Decided>> = [];
  const signers = new Map<string, WebhookSigner>();
  for (const delivery of deliveries) {
    if (delivery.status !== 'pending' || delivery.attemptCount > 0) {
      logger.debug(
        { delivery_id: delivery.id, status: delivery.status, attempts: delivery.attemptCount },
        'webhook delivery already attempted; left out of the batch',
      );
      continue;
    }
    const webhook = delivery.webhook;
    if (!webhook) {
      logger.warn({ delivery_id: delivery.id }, 'webhook subscription not found; delivery dropped');
      continue;
    }
    if (!webhook.isActive && delivery.event !== 'webhook.test') attempts.push(inactive(delivery));
    else {
      let signer = signers.get(webhook.secret);
      if (!signer) {
        signer = webhookSigner(webhook.secret);
        signers.set(webhook.secret, signer);
      }
      attempts.push(attempt(services, delivery, webhook, signer, false, options));
    }
  }
  const started = performance.now();
  const decided = await Promise.all(attempts);
  // One info line per batch; each delivery's own line is at debug when it succeeded (its attempt
  // is in the delivery log, GET /webhooks/:id/deliveries), at warn when it failed.
  await finish(services, decided, 'debug');
  if (decided.length > 0 && logger.isLevelEnabled('info')) {
    const count = (status: Decided['status']) => decided.filter((d) => d.status === status).length;
    logger.info(
      {
        webhook_ids: [...new Set(decided.map((d) => d.delivery.webhookId))],
        deliveries: decided.length,
        succeeded: count('succeeded'),
        retrying: count('pending'),
        failed: count('failed'),
        duration_ms: Math.round(performance.now() - started),
      },
      'webhook batch delivered',
    );
  }
}

/**
 * One attempt per job: the delivery schedules its own retries (WEBHOOK_RETRY_DELAYS_MS, with jitter)
 * as new jobs named after the attempt, and records each attempt in its log row.
 */
export const deliverWebhookJob = singleAttemptJob({
  name: 'webhook.deliver',
  payload: deliverPayload,
  run: (services, payload) => attemptDelivery(services, payload),
});

/**
 * The relay's batches: one run per batch, not retried by the queue (a failed run leaves its
 * deliveries pending and due, which the sweeper wakes one by one); a run cut short by a dead worker
 * is run again by the queue's stalled-job check.
 */
export const deliverWebhookBatchJob = singleAttemptJob({
  name: 'webhook.deliver_batch',
  payload: deliverBatchPayload,
  run: (services, payload) => attemptDeliveryBatch(services, payload),
});

/** Handlers running the real deliveries with `options` (tests and the benchmark: their receiver's certificate). */
export function deliveryHandlers(services: Services, options: DeliveryOptions = {}): JobHandlers {
  return {
    'webhook.deliver': (payload) => attemptDelivery(services, payload, options),
    'webhook.deliver_batch': (payload) => attemptDeliveryBatch(services, payload, options),
  };
}

/** Re-enqueues due pending deliveries; returns how many. */
async function sweepPendingDeliveries(services: Services, graceMs: number): Promise<number> {
  const cutoff = sweepCutoff(new Date(), graceMs);
  const due = await services.db.system
    .select({
      id: webhookDeliveries.id,
      attempts: sql<number>`jsonb_array_length(${webhookDeliveries.attempts})`,
    })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, 'pending'), lte(webhookDeliveries.nextAttemptAt, cutoff)))
    .orderBy(webhookDeliveries.nextAttemptAt)
    .limit(SWEEP_BATCH);
  return wakeDue(
    services,
    'webhook.deliver',
    // The id of the attempt this job makes, as the delivery handler names its retries.
    due.map((row) => ({ payload: { deliveryId: row.id }, jobId: `${row.id}:${Number(row.attempts) + 1}` })),
    'pending deliveries',
  );
}

export const deliverySweep: Sweep = { name: 'webhook deliveries', run: sweepPendingDeliveries };
