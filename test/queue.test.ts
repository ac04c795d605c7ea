// Locks in the in-process job runner (delays, including those beyond the longest Node timer, job-id dedupe, concurrency) and the sweeper that resumes pending deliveries after a restart.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, vi } from 'vitest';
import { newId } from '../core/ids.ts';
import { createLogger } from '../core/logger.ts';
import type { JobHandlers } from '../core/queue.ts';
import { InProcessQueue, MAX_TIMER_MS } from '../core/queue-in-process.ts';
import { startBackgroundWork } from '../workers/runtime.ts';
import { fileTest, type TestContext, type TestOrg } from './fixtures/index.ts';
import { seedWebhook, seedWebhookDelivery } from './webhooks/kit.ts';

const test = fileTest({ plan: 'starter' });

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

function recording(runMs = 0): { handlers: JobHandlers; ran: Array<{ id: string; at: number }> } {
  const ran: Array<{ id: string; at: number }> = [];
  return {
    ran,
    handlers: {
      'webhook.deliver': async ({ deliveryId }) => {
        if (runMs > 0) await sleep(runMs);
        ran.push({ id: deliveryId, at: Date.now() });
      },
    },
  };
}

describe('in-process queue', () => {
  test('runs a delayed job no earlier than its delay', async () => {
    const queue = new InProcessQueue(createLogger('silent'));
    const { handlers, ran } = recording();
    await queue.startWorkers(handlers, { concurrency: 2 });
    const start = Date.now();
    await queue.enqueue('webhook.deliver', { deliveryId: 'later' }, { delayMs: 200 });
    await queue.enqueue('webhook.deliver', { deliveryId: 'now' });
    await until(() => ran.length === 2);
    expect(ran.map((r) => r.id)).toEqual(['now', 'later']);
    expect((ran[1]?.at ?? 0) - start).toBeGreaterThanOrEqual(190);
    await queue.close();
  });

  test('holds a job due beyond the longest Node timer (a 30-day schedule) until its time', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const queue = new InProcessQueue(createLogger('silent'));
      const { handlers, ran } = recording();
      await queue.startWorkers(handlers, { concurrency: 1 });
      const thirtyDays = 30 * 24 * 60 * 60 * 1000;
      expect(thirtyDays).toBeGreaterThan(MAX_TIMER_MS);
      await queue.enqueue('webhook.deliver', { deliveryId: 'in-30-days' }, { delayMs: thirtyDays });
      // Past the longest single timer: a plain setTimeout would have fired (at once) by now.
      await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1000);
      expect(ran).toEqual([]);
      await vi.advanceTimersByTimeAsync(thirtyDays - MAX_TIMER_MS - 2000);
      expect(ran).toEqual([]);
      await vi.advanceTimersByTimeAsync(1000);
      expect(ran.map((r) => r.id)).toEqual(['in-30-days']);
      await queue.close();
    } finally {
      vi.useRealTimers();
    }
  });

  test('ignores a job id that is still waiting or running, and accepts it again once done', async () => {
    const queue = new InProcessQueue(createLogger('silent'));
    const { handlers, ran } = recording(50);
    await queue.startWorkers(handlers, { concurrency: 4 });
    await queue.enqueue('webhook.deliver', { deliveryId: 'a' }, { jobId: 'a', delayMs: 30 });
    await queue.enqueue('webhook.deliver', { deliveryId: 'a' }, { jobId: 'a' });
    await sleep(40);
    // Running now: still a duplicate.
    await queue.enqueue('webhook.deliver', { deliveryId: 'a' }, { jobId: 'a' });
    await queue.enqueue('webhook.deliver', { deliveryId: 'a' }, { jobId: 'a:2' });
    await until(() => ran.length === 2);
    await sleep(100);
    expect(ran.map((r) => r.id)).toEqual(['a', 'a']);
    await queue.enqueue('webhook.deliver', { deliveryId: 'a' }, { jobId: 'a' });
    await until(() => ran.length === 3);
    await queue.close();
  });

  test('runs at most `concurrency` jobs at once', async () => {
    const queue = new InProcessQueue(createLogger('silent'));
    let running = 0;
    let peak = 0;
    let done = 0;
    await queue.startWorkers(
      {
        'webhook.deliver': async () => {
          running++;
          peak = Math.max(peak, running);
          await sleep(30);
          running--;
          done++;
        },
      },
      { concurrency: 3 },
    );
    for (let i = 0; i < 10; i++) await queue.enqueue('webhook.deliver', { deliveryId: `d${i}` });
    await until(() => done === 10);
    expect(peak).toBe(3);
    await queue.close();
  });
});

describe('sweeper', () => {
  async function delivery(
    t: TestContext,
    org: TestOrg,
    status: string,
    nextAttemptAt: Date | null,
  ): Promise<string> {
    const webhookId = await seedWebhook(t, org);
    return seedWebhookDelivery(t, org, { webhookId, outboxEventId: newId(), status, nextAttemptAt });
  }

  test('re-enqueues due pending deliveries left by a previous process, and only those', async ({
    t,
    org,
  }) => {
    const hourAgo = new Date(Date.now() - 3_600_000);
    const leftOver = await delivery(t, org, 'pending', hourAgo);
    const notYetDue = await delivery(t, org, 'pending', new Date(Date.now() + 3_600_000));
    const finished = await delivery(t, org, 'succeeded', hourAgo);
    const { handlers, ran } = recording();
    const background = await startBackgroundWork(t.services, {
      handlers,
      relayIntervalMs: 1000,
      sweepIntervalMs: 60_000,
    });
    try {
      await until(() => ran.some((r) => r.id === leftOver));
      await sleep(100);
      const ids = ran.map((r) => r.id);
      expect(ids.filter((id) => id === leftOver)).toHaveLength(1);
      expect(ids).not.toContain(notYetDue);
      expect(ids).not.toContain(finished);
    } finally {
      await background.stop();
    }
  });
});

describe('crm worker', () => {
  test('refuses to start without REDIS_URL, with one line on stderr and exit code 2', () => {
    const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'bin.js');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
    };
    delete env.REDIS_URL;
    const result = spawnSync(process.execPath, [bin, 'worker'], { env, encoding: 'utf8', timeout: 30_000 });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'crm: crm worker needs REDIS_URL (without Redis, crm serve runs the workers itself)\n',
    );
  });
});
