// `npm run bench:webhooks`: signed webhook deliveries per second end to end (outbox row -> relay ->
// BullMQ -> signed HTTPS POST -> 'succeeded' in the delivery log) with two BullMQ workers, in this
// process (b) and as `crm worker --processes 2` (c), next to a bare loop of signed undici POSTs to
// the same receiver at the same total concurrency.
// Targets (issue 4 item 9): the pipeline reaches >= 50% of the bare loop and >= 1,000 deliveries/s.
//
// The receiver runs in a child process (this file with the argument `receiver`), so it does not
// compete with the workers for their event loop; it answers 204 at once over keep-alive HTTPS and
// keeps a sample of the requests, whose signatures the parent checks the way a customer would.
//
// Every scenario is timed after a warm-up (1,000 POSTs or deliveries), so connections are open and
// code is compiled in each; the pipelines' progress is read from the receiver's count, the
// database's log only once it has them all.
//
// Environment: WEBHOOK_BENCH_EVENTS (default 5000), WEBHOOK_BENCH_CONCURRENCY (per worker, default
// 32), WEBHOOK_BENCH_TIMEOUT_S (give up waiting for the pipeline, default 180),
// BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL.

import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, count, eq, isNull } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { Agent, type Dispatcher, request } from 'undici';
import { z } from 'zod';
import { createServices } from '../app/services.ts';
import { loadConfig } from '../core/config.ts';
import { outboxEvents } from '../core/db/schema.ts';
import { newId } from '../core/ids.ts';
import { createLogger } from '../core/logger.ts';
import { createOrganizationWithOwner } from '../core/organizations.ts';
import type { Services } from '../core/services.ts';
import { generateWebhookSecret } from '../core/webhook-secret.ts';
import { createScratchDatabase } from '../test/helpers.ts';
import { createSelfSignedCertificate } from '../test/support/https-receiver.ts';
import { deliveryHandlers, WEBHOOK_USER_AGENT } from '../tools/webhooks/deliver.ts';
import {
  signPayload,
  standardWebhookSignature,
  verifyStandardWebhook,
  verifyWebhookSignature,
} from '../tools/webhooks/signing.ts';
import { createDeliveryDispatchers, parseTargetUrl } from '../tools/webhooks/ssrf.ts';
import { webhookDeliveries, webhooks } from '../tools/webhooks/tables.ts';
import { type BackgroundWork, startBackgroundWork } from '../workers/runtime.ts';
import { gitCommit, machine } from './environment.ts';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const BIN = fileURLToPath(new URL('../cli/bin.js', import.meta.url));
const SAMPLE_SIZE = 200;
const WORKERS = 2;

// ---------------------------------------------------------------------------------------------
// The receiver (child process).

const toReceiver = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start'), key: z.string(), cert: z.string() }),
  z.object({ type: z.literal('reset') }),
  z.object({ type: z.literal('stats') }),
  z.object({ type: z.literal('hits') }),
]);
const sampled = z.object({ headers: z.record(z.string(), z.string()), body: z.string() });
const fromReceiver = z.discriminatedUnion('type', [
  z.object({ type: z.literal('listening'), port: z.number().int() }),
  z.object({ type: z.literal('reset') }),
  z.object({ type: z.literal('stats'), hits: z.number().int(), sample: z.array(sampled) }),
  z.object({ type: z.literal('hits'), hits: z.number().int() }),
]);
type FromReceiver = z.infer<typeof fromReceiver>;

function runReceiver(): void {
  let hits = 0;
  let sample: Array<z.infer<typeof sampled>> = [];
  const reply = (message: FromReceiver) => process.send?.(message);
  process.on('message', (raw: unknown) => {
    const message = toReceiver.parse(raw);
    if (message.type === 'reset') {
      hits = 0;
      sample = [];
      reply({ type: 'reset' });
    } else if (message.type === 'stats') {
      reply({ type: 'stats', hits, sample });
    } else if (message.type === 'hits') {
      reply({ type: 'hits', hits });
    } else {
      const server = createServer(
        { key: message.key, cert: message.cert, keepAliveTimeout: 30_000 },
        (req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            hits++;
            // Every k-th request is kept, so the sample spans the whole run, not just its start.
            if (sample.length < SAMPLE_SIZE && hits % 7 === 1) {
              const headers: Record<string, string> = {};
              for (const [name, value] of Object.entries(req.headers))
                if (typeof value === 'string') headers[name] = value;
              sample.push({ headers, body: Buffer.concat(chunks).toString('base64') });
            }
            res.writeHead(204).end();
          });
        },
      );
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        if (address === null || typeof address === 'string') throw new Error('receiver has no TCP address');
        reply({ type: 'listening', port: address.port });
      });
    }
  });
  process.on('disconnect', () => process.exit(0));
}

class ReceiverProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(key: string, cert: string): Promise<ReceiverProcess> {
    const child = fork(fileURLToPath(import.meta.url), ['receiver'], { execArgv: ['--import', 'tsx'] });
    const listening = await ReceiverProcess.next(child, 'listening', { type: 'start', key, cert });
    if (listening.type !== 'listening') throw new Error('receiver did not start');
    return new ReceiverProcess(child, `https://127.0.0.1:${listening.port}/hook`);
  }

  private static next(
    child: ChildProcess,
    type: FromReceiver['type'],
    send: z.infer<typeof toReceiver>,
  ): Promise<FromReceiver> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`receiver exited with ${code}`));
      const onMessage = (raw: unknown) => {
        const message = fromReceiver.parse(raw);
        if (message.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send(send);
    });
  }

  async reset(): Promise<void> {
    await ReceiverProcess.next(this.child, 'reset', { type: 'reset' });
  }

  async stats(): Promise<{ hits: number; sample: Array<z.infer<typeof sampled>> }> {
    const message = await ReceiverProcess.next(this.child, 'stats', { type: 'stats' });
    if (message.type !== 'stats') throw new Error('unexpected receiver answer');
    return message;
  }

  /** The requests received since the last reset, without the sample (cheap enough to poll). */
  async hits(): Promise<number> {
    const message = await ReceiverProcess.next(this.child, 'hits', { type: 'hits' });
    if (message.type !== 'hits') throw new Error('unexpected receiver answer');
    return message.hits;
  }

  stop(): void {
    this.child.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// The benchmark (parent process).

function log(message: string): void {
  process.stderr.write(`[bench:webhooks] ${message}\n`);
}

const ms = (from: number) => performance.now() - from;

/** A lead as lead.created carries it (about the size of a real one). */
function leadData(i: number): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    lead: {
      _id: newId(),
      name: `Benchmark lead ${i}`,
      email: `lead${i}@example.com`,
      phone: '+1 555 0100',
      company: 'Example Corp',
      status: 'new',
      source: 'website',
      value: 1200,
      tags: ['bench', 'webhooks'],
      notes: 'Created by the webhook throughput benchmark.',
      owner_id: newId(),
      created_at: now,
      updated_at: now,
    },
  };
}

/** Runs `total` tasks with at most `concurrency` at once. */
async function pool(total: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      while (next < total) await task(next++);
    }),
  );
}

interface BareResult {
  posts: number;
  seconds: number;
  perSecond: number;
  failures: number;
  /** This process's CPU (user + system) per POST, in µs: what one send costs here. */
  cpuMicrosPerPost: number;
}

/**
 * N signed POSTs exactly as a delivery builds them (envelope, X-CRM-Signature, Standard Webhooks
 * headers), through `dispatcherFor` (a plain keep-alive agent, or the deliveries' guarded pools).
 */
async function bareLoop(
  url: string,
  secret: string,
  total: number,
  concurrency: number,
  dispatcherFor: () => Promise<Dispatcher>,
): Promise<BareResult> {
  let failures = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await pool(total, concurrency, async (i) => {
    const now = new Date();
    const timestamp = Math.floor(now.getTime() / 1000);
    const id = newId();
    const body = Buffer.from(
      JSON.stringify({ event: 'lead.created', org_id: id, timestamp: now.toISOString(), data: leadData(i) }),
    );
    try {
      const dispatcher = await dispatcherFor();
      const res = await request(url, {
        method: 'POST',
        dispatcher,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': WEBHOOK_USER_AGENT,
          'x-crm-event': 'lead.created',
          'x-crm-signature': signPayload(secret, body),
          'x-crm-delivery-id': id,
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': standardWebhookSignature(secret, id, timestamp, body),
        },
      });
      await res.body.dump();
      if (res.statusCode !== 204) failures++;
    } catch {
      failures++;
    }
  });
  const seconds = ms(started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    posts: total,
    seconds,
    perSecond: total / seconds,
    failures,
    cpuMicrosPerPost: (cpu.user + cpu.system) / total,
  };
}

/** Checks both signatures of every sampled request; returns how many were valid. */
function verifySample(sample: Array<z.infer<typeof sampled>>, secret: string): number {
  let valid = 0;
  for (const hit of sample) {
    const body = Buffer.from(hit.body, 'base64');
    const crm = verifyWebhookSignature(body, hit.headers['x-crm-signature'], secret);
    const standard = verifyStandardWebhook(
      body,
      {
        id: hit.headers['webhook-id'],
        timestamp: hit.headers['webhook-timestamp'],
        signature: hit.headers['webhook-signature'],
      },
      secret,
    );
    if (crm && standard) valid++;
  }
  return valid;
}

async function deliveryCounts(services: Services): Promise<{ succeeded: number; failed: number }> {
  const rows = await services.db.system
    .select({ status: webhookDeliveries.status, n: count() })
    .from(webhookDeliveries)
    .groupBy(webhookDeliveries.status);
  const of = (status: string) => rows.find((r) => r.status === status)?.n ?? 0;
  return { succeeded: of('succeeded'), failed: of('failed') };
}

/**
 * Waits until `events` more deliveries than `before` are in the log, succeeded or failed, or until
 * `deadline` (performance.now() time); returns the new ones' counts. Polls the receiver's count
 * (a message to its process, no database) every 10 ms and reads the log once the receiver has them
 * all, or every second (a failed delivery may never reach it). Counting the log every 50 ms, as
 * this once did, had PostgreSQL scan every delivery row per poll: the bench's own work, competing
 * with the pipeline it measures for the same cores (PostgreSQL spent 111 µs per delivery of (b) at
 * 20,000 events with it, 89-97 without).
 * `onPoll` runs on every poll (the relay's progress).
 */
async function waitForDeliveries(
  services: Services,
  receiver: ReceiverProcess,
  before: { succeeded: number; failed: number },
  events: number,
  deadline: number,
  onPoll: () => Promise<void> = async () => undefined,
): Promise<{ succeeded: number; failed: number }> {
  let done = { succeeded: 0, failed: 0 };
  let lastRead = performance.now();
  while (done.succeeded + done.failed < events && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await onPoll();
    if ((await receiver.hits()) < events && performance.now() - lastRead < 1000) continue;
    lastRead = performance.now();
    const now = await deliveryCounts(services);
    done = { succeeded: now.succeeded - before.succeeded, failed: now.failed - before.failed };
  }
  return done;
}

async function unrelayed(services: Services): Promise<number> {
  const [row] = await services.db.system
    .select({ n: count() })
    .from(outboxEvents)
    .where(isNull(outboxEvents.relayedAt));
  return row?.n ?? 0;
}

interface PipelineResult {
  events: number;
  succeeded: number;
  failed: number;
  /** From the start of relaying until the last outbox row was relayed. */
  relayedSeconds: number | null;
  seconds: number;
  perSecond: number;
  timedOut: boolean;
  /**
   * This process's CPU per delivery, in µs, while it ran the pipeline (b): relay, BullMQ, signing,
   * sending and recording, plus the bench's polling; null for (c), whose work is in its children.
   */
  cpuMicrosPerDelivery: number | null;
}

async function deleteKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl);
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = nextCursor;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** Writes `events` outbox rows as recordEvent does, in one transaction, so they appear at once. */
async function insertOutbox(services: Services, orgId: string, events: number): Promise<void> {
  await services.db.transaction(async (tx) => {
    for (let from = 0; from < events; from += 1000) {
      const rows = Array.from({ length: Math.min(1000, events - from) }, (_, k) => ({
        id: newId(),
        orgId,
        event: 'lead.created',
        data: leadData(from + k),
      }));
      await tx.insert(outboxEvents).values(rows);
    }
  });
}

/**
 * `crm worker --processes N` on the scratch database and queue prefix, the receiver's certificate
 * trusted through NODE_EXTRA_CA_CERTS (as a deployment would); resolves once every child has logged
 * that it started.
 */
async function startWorkerProcesses(
  processes: number,
  env: NodeJS.ProcessEnv,
): Promise<{ stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'worker', '--processes', String(processes)], {
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    let started = 0;
    let buffered = '';
    child.once('exit', (code) => reject(new Error(`crm worker exited with ${code} before starting`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.includes('"crm worker started"')) started++;
      if (started === processes) {
        // Started: the rest of their output is drained unread (splitting it into lines was this
        // process's work, on the cores the workers run on).
        child.stdout?.removeAllListeners('data');
        child.stdout?.resume();
        resolve();
      }
    });
  });
  return {
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;

async function main(): Promise<void> {
  const env = z
    .object({
      WEBHOOK_BENCH_EVENTS: z.coerce.number().int().positive().default(5000),
      WEBHOOK_BENCH_CONCURRENCY: z.coerce.number().int().positive().default(32),
      WEBHOOK_BENCH_TIMEOUT_S: z.coerce.number().positive().default(180),
      BENCH_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
      BENCH_REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
    })
    .parse(process.env);
  const events = env.WEBHOOK_BENCH_EVENTS;
  const perWorker = env.WEBHOOK_BENCH_CONCURRENCY;
  const totalConcurrency = WORKERS * perWorker;
  const startedAt = new Date();
  const header = {
    date: startedAt.toISOString(),
    commit: gitCommit(),
    machine: machine(),
    settings: `${events} lead.created events, ${WORKERS} BullMQ workers × concurrency ${perWorker}; bare loops at concurrency ${totalConcurrency}`,
  };
  const certificate = createSelfSignedCertificate();
  const receiver = await ReceiverProcess.start(certificate.key, certificate.cert);
  const scratch = await createScratchDatabase(env.BENCH_DATABASE_URL, { empty: true });
  const prefix = `crm-bench-${randomBytes(6).toString('hex')}`;
  const processPrefix = `${prefix}-processes`;
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATABASE_URL: scratch.url,
    REDIS_URL: env.BENCH_REDIS_URL,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  const all: Services[] = [];
  const runtimes: BackgroundWork[] = [];
  // A secret as create_webhook generates it, so webhook-signature is keyed with decoded bytes.
  const secret = generateWebhookSecret();
  try {
    // Two services objects = two nodes: each has its own BullMQ Worker, pg pool and relay loop.
    for (let i = 0; i < WORKERS; i++)
      all.push(await createServices(config, { logger: createLogger('warn'), queue: { prefix } }));
    const [services] = all;
    if (!services) throw new Error('no services');
    const { organization } = await services.db.transaction((tx) =>
      createOrganizationWithOwner(tx, {
        name: 'Webhook benchmark',
        plan: 'enterprise',
        owner: { name: 'Owner', email: 'owner@bench.invalid', password: randomBytes(16).toString('hex') },
      }),
    );
    await services.db.system.insert(webhooks).values({
      id: newId(),
      orgId: organization.id,
      url: receiver.url,
      events: ['lead.created'],
      secret,
      isActive: true,
    });

    // (1) Bare loop, pooled keep-alive connections (the reference of the target), after a warm-up.
    const pooled = new Agent({ connect: { ca: certificate.cert }, connections: totalConcurrency });
    const pooledFor = async () => pooled;
    await bareLoop(receiver.url, secret, Math.min(1000, events), totalConcurrency, pooledFor);
    await receiver.reset();
    const bare = await bareLoop(receiver.url, secret, events, totalConcurrency, pooledFor);
    await pooled.close();
    const bareStats = await receiver.stats();
    const bareValid = verifySample(bareStats.sample, secret);
    log(
      `bare loop (keep-alive): ${bare.perSecond.toFixed(0)} POSTs/s, ${bare.failures} failures, ${bare.cpuMicrosPerPost.toFixed(0)} µs CPU per POST`,
    );

    // (2) Bare loop through the deliveries' own guarded pools (tools/webhooks/ssrf.ts): the address
    // checked and pinned per POST, the connections kept warm per (origin, address).
    await receiver.reset();
    const guarded = createDeliveryDispatchers({ allowPrivate: true, ca: certificate.cert });
    const target = parseTargetUrl(receiver.url);
    if (!target.ok) throw new Error(target.reason);
    const fresh = await bareLoop(receiver.url, secret, events, totalConcurrency, () =>
      guarded.dispatcherFor(target),
    );
    await guarded.close();
    log(`bare loop (guarded pools): ${fresh.perSecond.toFixed(0)} POSTs/s, ${fresh.failures} failures`);

    // Before each pipeline is timed it delivers a warm-up of events, as the bare loop sends one:
    // its connections open, its code is compiled, then the receiver's count starts again.
    const warmUp = async (): Promise<{ succeeded: number; failed: number }> => {
      const before = await deliveryCounts(services);
      await insertOutbox(services, organization.id, warmUpEvents);
      const warmed = await waitForDeliveries(
        services,
        receiver,
        before,
        warmUpEvents,
        performance.now() + env.WEBHOOK_BENCH_TIMEOUT_S * 1000,
      );
      if (warmed.succeeded < warmUpEvents) throw new Error(`warm-up: ${JSON.stringify(warmed)}`);
      await receiver.reset();
      return deliveryCounts(services);
    };
    const warmUpEvents = Math.min(1000, events);

    // (3) The pipeline: both runtimes start and deliver the warm-up, then N outbox rows appear at
    // once (one transaction, as (4) does), and the clock starts: their start-up is not delivery time.
    await receiver.reset();
    for (const s of all)
      runtimes.push(
        await startBackgroundWork(s, {
          concurrency: perWorker,
          relayIntervalMs: 50,
          handlers: deliveryHandlers(s, { ca: certificate.cert }),
        }),
      );
    const warmed = await warmUp();
    log(`${WORKERS} runtimes started and warmed up; inserting ${events} outbox rows`);
    await insertOutbox(services, organization.id, events);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    // Set by the poll below (an object: TypeScript does not see a callback assign a local).
    const relay: { seconds: number | null; checkedAt: number } = { seconds: null, checkedAt: started };
    const done = await waitForDeliveries(
      services,
      receiver,
      warmed,
      events,
      started + env.WEBHOOK_BENCH_TIMEOUT_S * 1000,
      async () => {
        // Every 100 ms until done: a count of the outbox rows not yet relayed.
        if (relay.seconds !== null || performance.now() - relay.checkedAt < 100) return;
        relay.checkedAt = performance.now();
        if ((await unrelayed(services)) === 0) relay.seconds = ms(started) / 1000;
      },
    );
    const relayedSeconds = relay.seconds;
    const seconds = ms(started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const pipeline: PipelineResult = {
      events,
      ...done,
      relayedSeconds,
      seconds,
      perSecond: done.succeeded / seconds,
      timedOut: done.succeeded + done.failed < events,
      cpuMicrosPerDelivery: (cpu.user + cpu.system) / Math.max(1, done.succeeded + done.failed),
    };
    await Promise.all(runtimes.map((r) => r.stop()));
    const pipelineStats = await receiver.stats();
    const pipelineValid = verifySample(pipelineStats.sample, secret);
    const [succeededInLog] = await services.db.system
      .select({ n: count() })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.orgId, organization.id), eq(webhookDeliveries.status, 'succeeded')));
    // The log's succeeded rows of (b) itself, the warm-up's left out.
    const logged = (succeededInLog?.n ?? 0) - warmed.succeeded;
    log(
      `pipeline: ${pipeline.perSecond.toFixed(0)} deliveries/s (${pipeline.succeeded} succeeded, ${pipeline.failed} failed in ${seconds.toFixed(1)} s; relay done at ${relayedSeconds?.toFixed(1) ?? 'never'} s; ${pipeline.cpuMicrosPerDelivery?.toFixed(0)} µs CPU per delivery in this process)`,
    );

    // (4) The same pipeline in `crm worker --processes 2` (one worker process per core), on a queue
    // prefix of its own (the BullMQ workers of (3) still listen on theirs).
    await receiver.reset();
    const caDir = mkdtempSync(join(tmpdir(), 'crm-bench-ca-'));
    const caFile = join(caDir, 'receiver.pem');
    writeFileSync(caFile, certificate.cert);
    const workers = await startWorkerProcesses(WORKERS, {
      DATABASE_URL: scratch.url,
      REDIS_URL: env.BENCH_REDIS_URL,
      CRM_QUEUE_PREFIX: processPrefix,
      JWT_SECRET: randomBytes(32).toString('hex'),
      WORKER_CONCURRENCY: String(perWorker),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      NODE_EXTRA_CA_CERTS: caFile,
    });
    const before = await warmUp();
    log(`${WORKERS} worker processes started and warmed up; inserting ${events} outbox rows`);
    await insertOutbox(services, organization.id, events);
    const processesStarted = performance.now();
    const processesDone = await waitForDeliveries(
      services,
      receiver,
      before,
      events,
      processesStarted + env.WEBHOOK_BENCH_TIMEOUT_S * 1000,
    );
    const processesSeconds = ms(processesStarted) / 1000;
    const processes: PipelineResult = {
      events,
      ...processesDone,
      relayedSeconds: null,
      seconds: processesSeconds,
      perSecond: processesDone.succeeded / processesSeconds,
      timedOut: processesDone.succeeded + processesDone.failed < events,
      cpuMicrosPerDelivery: null,
    };
    const workersExit = await workers.stop();
    rmSync(caDir, { recursive: true, force: true });
    const processesStats = await receiver.stats();
    const processesValid = verifySample(processesStats.sample, secret);
    log(
      `worker processes: ${processes.perSecond.toFixed(0)} deliveries/s (${processes.succeeded} succeeded, ${processes.failed} failed in ${processesSeconds.toFixed(1)} s; supervisor exit ${workersExit})`,
    );

    const targets = [
      {
        target: 'deliveries/s >= 50% of the bare keep-alive loop',
        met: !pipeline.timedOut && pipeline.perSecond >= 0.5 * bare.perSecond,
        measured: `${pct(pipeline.perSecond, bare.perSecond)} (${pipeline.perSecond.toFixed(0)} / ${bare.perSecond.toFixed(0)})`,
      },
      {
        target: 'the same with `crm worker --processes 2` (c)',
        met: !processes.timedOut && processes.perSecond >= 0.5 * bare.perSecond,
        measured: `${pct(processes.perSecond, bare.perSecond)} (${processes.perSecond.toFixed(0)} / ${bare.perSecond.toFixed(0)})`,
      },
      {
        target: 'deliveries/s >= 1,000',
        met: !pipeline.timedOut && pipeline.perSecond >= 1000,
        measured: `${pipeline.perSecond.toFixed(0)}/s (${pct(pipeline.perSecond, 1000)} of the target)`,
      },
    ];
    const section = [
      `## ${header.date} — webhook delivery throughput (\`npm run bench:webhooks\`)`,
      '',
      `- Commit: ${header.commit}`,
      `- Machine: ${header.machine}`,
      `- Settings: ${header.settings}. PostgreSQL scratch database and Redis (BullMQ prefix \`${prefix}\`, removed afterwards); two \`startBackgroundWork\` runtimes over two services objects in this process (two BullMQ Workers, two pg pools of 10, two relay loops at 50 ms); log level warn; WEBHOOK_ALLOW_PRIVATE_TARGETS=true; the receiver's CA passed to \`deliveryHandlers\` in (b), NODE_EXTRA_CA_CERTS in (c), whose worker processes have WORKER_CONCURRENCY ${perWorker} and a pg pool of 10 each. The receiver is a keep-alive node:https server in a child process answering 204 at once.`,
      '',
      '| scenario | items | seconds | per second | failures |',
      '|---|---:|---:|---:|---:|',
      `| (a) bare loop: signed undici POSTs, keep-alive pool of ${totalConcurrency} | ${bare.posts} | ${bare.seconds.toFixed(2)} | ${bare.perSecond.toFixed(0)} | ${bare.failures} |`,
      `| (a') bare loop through the deliveries' guarded pools (\`createDeliveryDispatchers\`) | ${fresh.posts} | ${fresh.seconds.toFixed(2)} | ${fresh.perSecond.toFixed(0)} | ${fresh.failures} |`,
      `| (b) outbox -> relay -> BullMQ -> signed HTTPS POST -> 'succeeded'${pipeline.timedOut ? ' (timed out)' : ''} | ${pipeline.succeeded} of ${events} | ${seconds.toFixed(2)} | ${pipeline.perSecond.toFixed(0)} | ${pipeline.failed} |`,
      `| (c) the same in \`crm worker --processes ${WORKERS}\` (concurrency ${perWorker} each)${processes.timedOut ? ' (timed out)' : ''} | ${processes.succeeded} of ${events} | ${processesSeconds.toFixed(2)} | ${processes.perSecond.toFixed(0)} | ${processes.failed} |`,
      '',
      `- Relay (all ${events} outbox rows relayed and enqueued): ${relayedSeconds === null ? 'not finished' : `${relayedSeconds.toFixed(2)} s, ${(events / relayedSeconds).toFixed(0)} rows/s`}.`,
      `- Receiver hits during (b): ${pipelineStats.hits}; delivery log rows 'succeeded': ${logged}.`,
      `- This process's CPU (user + system): ${bare.cpuMicrosPerPost.toFixed(0)} µs per POST in (a), ${pipeline.cpuMicrosPerDelivery?.toFixed(0)} µs per delivery in (b) (relay, BullMQ, signing, sending, recording, and the bench's polling).`,
      `- Signatures: X-CRM-Signature and webhook-signature valid on ${bareValid} of ${bareStats.sample.length} sampled requests of (a), ${pipelineValid} of ${pipelineStats.sample.length} of (b) and ${processesValid} of ${processesStats.sample.length} of (c).`,
      '',
      '| target | result | measured |',
      '|---|---|---|',
      ...targets.map((t) => `| ${t.target} | ${t.met ? 'met' : '**not met**'} | ${t.measured} |`),
      '',
    ].join('\n');
    if (
      bareValid !== bareStats.sample.length ||
      pipelineValid !== pipelineStats.sample.length ||
      processesValid !== processesStats.sample.length
    )
      throw new Error(`invalid signatures in the sample:\n${section}`);
    appendFileSync(join(benchDir, 'results.md'), `\n${section}`);
    const jsonDir = join(benchDir, 'results');
    mkdirSync(jsonDir, { recursive: true });
    const file = join(jsonDir, `${header.date.replace(/[:.]/g, '-')}-webhooks.json`);
    writeFileSync(
      file,
      `${JSON.stringify(
        {
          ...header,
          bare,
          bareGuardedPools: fresh,
          pipeline,
          workerProcesses: processes,
          receiverHits: pipelineStats.hits,
          signatures: {
            bare: { valid: bareValid, sampled: bareStats.sample.length },
            pipeline: { valid: pipelineValid, sampled: pipelineStats.sample.length },
          },
          targets,
        },
        null,
        2,
      )}\n`,
    );
    log(`appended to bench/results.md; raw results in ${file}`);
    process.stdout.write(`${section}\n`);
  } finally {
    await Promise.all(runtimes.map((r) => r.stop()));
    for (const s of all) await s.close();
    receiver.stop();
    const deleted =
      (await deleteKeys(env.BENCH_REDIS_URL, prefix)) +
      (await deleteKeys(env.BENCH_REDIS_URL, processPrefix));
    await scratch.drop();
    log(`cleaned up: scratch database dropped, ${deleted} Redis keys removed`);
  }
}

if (process.argv[2] === 'receiver') runReceiver();
else
  main().catch((err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  });
