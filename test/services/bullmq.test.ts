// Locks in the BullMQ queue: delays and job-id dedupe, the noeviction warning, recovery after a Redis restart without persistence, and a killed `crm worker` whose delivery completes on another worker.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../app/services.ts';
import { loadConfig } from '../../core/config.ts';
import { recordEvent } from '../../core/events.ts';
import { newId } from '../../core/ids.ts';
import { createLogger } from '../../core/logger.ts';
import { createOrganizationWithOwner } from '../../core/organizations.ts';
import type { JobHandlers } from '../../core/queue.ts';
import { BullMqQueue, checkRedisEviction } from '../../core/queue-bullmq.ts';
import type { Services } from '../../core/services.ts';
import { JOBS } from '../../tools/index.ts';
import { attemptDelivery } from '../../tools/webhooks/deliver.ts';
import { relayOutbox } from '../../tools/webhooks/relay.ts';
import { webhookDeliveries } from '../../tools/webhooks/tables.ts';
import { startBackgroundWork } from '../../workers/runtime.ts';
import { leadCreatedPayload } from '../fixtures/events.ts';
import { createScratchDatabase } from '../helpers.ts';
import { HttpsReceiver } from '../support/https-receiver.ts';
import { seedWebhook } from '../webhooks/kit.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'cli', 'bin.js');
const runPrefix = `crmtest-${randomBytes(4).toString('hex')}`;
let prefixSeq = 0;
const uniquePrefix = () => `${runPrefix}-${prefixSeq++}`;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

function recording(): { handlers: JobHandlers; ran: Array<{ id: string; at: number }> } {
  const ran: Array<{ id: string; at: number }> = [];
  return {
    ran,
    handlers: {
      'webhook.deliver': async ({ deliveryId }) => {
        ran.push({ id: deliveryId, at: Date.now() });
      },
    },
  };
}

function capturedLogger(): {
  logger: ReturnType<typeof createLogger>;
  lines: () => Array<Record<string, unknown>>;
} {
  const raw: string[] = [];
  const logger = createLogger('info', { write: (line: string) => raw.push(line) });
  return { logger, lines: () => raw.map((line) => JSON.parse(line)) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = address !== null && typeof address !== 'string' ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A throwaway redis-server without persistence, so a restart loses every key. */
async function startRedis(port: number, extra: string[] = []): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra],
    { stdio: 'ignore' },
  );
  const probe = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await until(
      async () => {
        try {
          if (probe.status !== 'ready') await probe.connect();
          return (await probe.ping()) === 'PONG';
        } catch {
          probe.disconnect();
          return false;
        }
      },
      10_000,
      `redis-server on ${port}`,
    );
  } finally {
    probe.disconnect();
  }
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

let scratch: { url: string; drop: () => Promise<void> };

beforeAll(async () => {
  scratch = await createScratchDatabase(DATABASE_URL);
});
afterAll(async () => {
  const cleanup = new Redis(REDIS_URL);
  const keys = await cleanup.keys(`${runPrefix}*`);
  if (keys.length > 0) await cleanup.del(...keys);
  cleanup.disconnect();
  await scratch.drop();
});

describe('BullMqQueue', () => {
  it('runs jobs, delayed ones no earlier than their delay', async () => {
    const queue = new BullMqQueue(REDIS_URL, {
      logger: createLogger('silent'),
      prefix: uniquePrefix(),
      jobs: JOBS,
    });
    const { handlers, ran } = recording();
    try {
      await queue.startWorkers(handlers, { concurrency: 2 });
      const start = Date.now();
      await queue.enqueue('webhook.deliver', { deliveryId: 'later' }, { delayMs: 400 });
      await queue.enqueue('webhook.deliver', { deliveryId: 'now' });
      await until(() => ran.length === 2, 10_000, 'both jobs');
      expect(ran.map((r) => r.id)).toEqual(['now', 'later']);
      expect((ran[1]?.at ?? 0) - start).toBeGreaterThanOrEqual(390);
    } finally {
      await queue.close();
    }
  });

  it('ignores a job id while it waits, accepts ids with a colon, and reuses an id once its job is done', async () => {
    const queue = new BullMqQueue(REDIS_URL, {
      logger: createLogger('silent'),
      prefix: uniquePrefix(),
      jobs: JOBS,
    });
    const { handlers, ran } = recording();
    try {
      await queue.enqueue('webhook.deliver', { deliveryId: 'd1' }, { jobId: 'd1', delayMs: 200 });
      await queue.enqueue('webhook.deliver', { deliveryId: 'd1' }, { jobId: 'd1' });
      await queue.enqueue('webhook.deliver', { deliveryId: 'd1' }, { jobId: 'd1:2' });
      await queue.enqueue('webhook.deliver', { deliveryId: 'd1' }, { jobId: 'd1:2' });
      await queue.startWorkers(handlers, { concurrency: 2 });
      await until(() => ran.length === 2, 10_000, 'two distinct jobs');
      await sleep(400);
      expect(ran).toHaveLength(2);
      await queue.enqueue('webhook.deliver', { deliveryId: 'd1' }, { jobId: 'd1' });
      await until(() => ran.length === 3, 10_000, 'the reused id');
    } finally {
      await queue.close();
    }
  });
});

describe('Redis eviction policy check', () => {
  it('warns when maxmemory-policy is not noeviction, says nothing when it is, and tolerates a disabled CONFIG', async () => {
    const port = await freePort();
    const redisServer = await startRedis(port);
    const client = new Redis(port, '127.0.0.1');
    try {
      const quiet = capturedLogger();
      await checkRedisEviction(client, quiet.logger);
      expect(quiet.lines().filter((l) => l.level === 40)).toEqual([]);

      await client.config('SET', 'maxmemory-policy', 'allkeys-lru');
      const noisy = capturedLogger();
      await checkRedisEviction(client, noisy.logger);
      const warnings = noisy.lines().filter((l) => l.level === 40);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ maxmemoryPolicy: 'allkeys-lru' });
      expect(String(warnings[0]?.msg)).toContain('noeviction');

      // The same check runs when the services start with REDIS_URL.
      const started = capturedLogger();
      const services = await createServices(
        loadConfig({ DATABASE_URL: scratch.url, REDIS_URL: `redis://127.0.0.1:${port}`, LOG_LEVEL: 'info' }),
        { logger: started.logger, withoutRateLimits: true },
      );
      await services.close();
      expect(started.lines().some((l) => l.level === 40 && l.maxmemoryPolicy === 'allkeys-lru')).toBe(true);
    } finally {
      client.disconnect();
      await stopRedis(redisServer);
    }

    const lockedPort = await freePort();
    const locked = await startRedis(lockedPort, ['--rename-command', 'CONFIG', '']);
    const lockedClient = new Redis(lockedPort, '127.0.0.1');
    try {
      const log = capturedLogger();
      await checkRedisEviction(lockedClient, log.logger);
      expect(log.lines().filter((l) => l.level === 40)).toEqual([]);
      expect(log.lines().some((l) => String(l.msg).includes('could not read Redis maxmemory-policy'))).toBe(
        true,
      );
    } finally {
      lockedClient.disconnect();
      await stopRedis(locked);
    }
  });
});

/** An organization with one subscription to lead.created at `url`. */
async function subscribedOrg(services: Services, url: string): Promise<{ orgId: string; webhookId: string }> {
  const { organization } = await services.db.transaction((tx) =>
    createOrganizationWithOwner(tx, {
      name: 'Queue Org',
      plan: 'starter',
      owner: { name: 'Owner', email: `owner-${newId()}@example.test`, password: 'correct horse battery' },
    }),
  );
  const webhookId = await seedWebhook(
    { services },
    { orgId: organization.id },
    { url, events: ['lead.created'], secret: 'whsec_queue_test' },
  );
  return { orgId: organization.id, webhookId };
}

async function deliveriesOf(services: Services, webhookId: string) {
  return services.db.system
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.webhookId, webhookId));
}

describe('recovery', () => {
  it('re-enqueues a delivery whose job a Redis restart without persistence lost, and delivers it', async () => {
    const receiver = await HttpsReceiver.start();
    const port = await freePort();
    let redisServer = await startRedis(port);
    const prefix = uniquePrefix();
    const services = await createServices(
      loadConfig({
        DATABASE_URL: scratch.url,
        REDIS_URL: `redis://127.0.0.1:${port}`,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        LOG_LEVEL: 'silent',
      }),
      { logger: createLogger('silent'), withoutRateLimits: true, queue: { prefix } },
    );
    const inspect = new Redis(port, '127.0.0.1');
    // It reconnects by itself once the restarted server is up.
    inspect.on('error', () => {});
    try {
      const { orgId, webhookId } = await subscribedOrg(services, receiver.url('/restart'));
      await services.db.withTenant(orgId, (tx) =>
        recordEvent(tx, orgId, 'lead.created', leadCreatedPayload(newId())),
      );
      const [deliveryId] = await relayOutbox(services);
      expect(deliveryId).toBeDefined();
      expect(await inspect.keys(`${prefix}:*`)).not.toEqual([]);

      await stopRedis(redisServer);
      redisServer = await startRedis(port);
      await until(() => inspect.status === 'ready', 10_000, 'the inspection client to reconnect');
      expect(await inspect.keys(`${prefix}:*`)).toEqual([]);

      const handlers: JobHandlers = {
        'webhook.deliver': (payload) => attemptDelivery(services, payload, { ca: receiver.ca }),
      };
      const background = await startBackgroundWork(services, {
        handlers,
        relayIntervalMs: 100,
        sweepIntervalMs: 200,
        sweepGraceMs: 100,
      });
      try {
        await until(
          async () => (await deliveriesOf(services, webhookId))[0]?.status === 'succeeded',
          15_000,
          'the delivery to succeed',
        );
      } finally {
        await background.stop();
      }
      const hits = receiver.hits('/restart');
      expect(hits).toHaveLength(1);
      expect(hits[0]?.headers['x-crm-delivery-id']).toBe(deliveryId);
      expect(await deliveriesOf(services, webhookId)).toHaveLength(1);
    } finally {
      inspect.disconnect();
      await services.close();
      await stopRedis(redisServer);
      await receiver.close();
    }
  }, 60_000);

  it('completes a delivery with the same id on a second `crm worker` after the first is killed mid-request', async () => {
    const receiver = await HttpsReceiver.start();
    const caDir = mkdtempSync(join(tmpdir(), 'crm-ca-'));
    const caFile = join(caDir, 'receiver.pem');
    writeFileSync(caFile, receiver.ca);
    const prefix = uniquePrefix();
    const services = await createServices(loadConfig({ DATABASE_URL: scratch.url, LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
      withoutRateLimits: true,
    });
    const workers: ChildProcess[] = [];
    const spawnWorker = () => {
      const child = spawn(process.execPath, [BIN, 'worker'], {
        env: {
          ...process.env,
          DATABASE_URL: scratch.url,
          REDIS_URL,
          CRM_QUEUE_PREFIX: prefix,
          CRM_WORKER_STALLED_MS: '1000',
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
          NODE_EXTRA_CA_CERTS: caFile,
          LOG_LEVEL: 'warn',
        },
        stdio: 'ignore',
      });
      workers.push(child);
      return child;
    };
    try {
      const { orgId, webhookId } = await subscribedOrg(services, receiver.url('/killed'));
      // The first request is held open long enough to kill the worker while it waits.
      receiver.respondWith({ headersDelayMs: 12_000 });
      const first = spawnWorker();
      await services.db.withTenant(orgId, (tx) =>
        recordEvent(tx, orgId, 'lead.created', leadCreatedPayload(newId())),
      );
      await receiver.waitForRequests(1, 30_000);
      const exited = new Promise<void>((resolve) => first.once('exit', () => resolve()));
      first.kill('SIGKILL');
      await exited;
      const [pending] = await deliveriesOf(services, webhookId);
      expect(pending?.status).toBe('pending');

      spawnWorker();
      await receiver.waitForRequests(2, 30_000);
      await until(
        async () => (await deliveriesOf(services, webhookId))[0]?.status === 'succeeded',
        15_000,
        'the delivery to succeed',
      );
      const rows = await deliveriesOf(services, webhookId);
      expect(rows).toHaveLength(1);
      const ids = receiver.hits('/killed').map((r) => r.headers['x-crm-delivery-id']);
      expect(ids).toEqual([rows[0]?.id, rows[0]?.id]);
      expect(rows[0]?.attempts).toHaveLength(1);

      // SIGTERM stops the surviving worker gracefully.
      const second = workers[1];
      const code = new Promise<number | null>((resolve) => second?.once('exit', (c) => resolve(c)));
      second?.kill('SIGTERM');
      expect(await code).toBe(0);
    } finally {
      for (const child of workers) {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.kill('SIGTERM');
          await exited;
        }
      }
      await services.close();
      await receiver.close();
      rmSync(caDir, { recursive: true, force: true });
    }
  }, 90_000);
});
