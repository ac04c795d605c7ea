// The behaviour every job queue owes its callers (core/jobs.ts), run against the in-process queue
// (test/ports/jobs.test.ts) and BullMQ on a real Redis (test/services/jobs-bullmq.test.ts).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type Jobs, registerJobs } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { createTestContext, type TestContext } from '../helpers.ts';

const contractPayload = z.object({
  token: z.string().min(1).describe('Which test run this is'),
  fail: z.boolean().optional().describe('Throw instead of succeeding'),
});

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    'contract.record': z.output<typeof contractPayload>;
    'contract.retry': z.output<typeof contractPayload>;
  }
}

interface Run {
  attempt: number;
  attempts: number;
  at: number;
}
const runs = new Map<string, Run[]>();
const failures = new Map<string, Array<{ attempt: number; message: string }>>();
const runsOf = (token: string): Run[] => runs.get(token) ?? [];

function record(token: string, run: Run): void {
  runs.set(token, [...runsOf(token), run]);
}

const recordJob = defineJob({
  name: 'contract.record',
  payload: contractPayload,
  async handler({ token }, { attempt, attempts }) {
    record(token, { attempt, attempts, at: Date.now() });
  },
});

const retryJob = defineJob({
  name: 'contract.retry',
  payload: contractPayload,
  attempts: 3,
  backoff: { type: 'exponential', delayMs: 100 },
  async handler({ token, fail }, { attempt, attempts }) {
    record(token, { attempt, attempts, at: Date.now() });
    if (fail) throw new Error(`attempt ${attempt} failed`);
  },
  async onFailure({ token }, error, { attempt }) {
    const message = error instanceof Error ? error.message : String(error);
    failures.set(token, [...(failures.get(token) ?? []), { attempt, message }]);
  },
});

/** The registry the queues under test are handed. */
const CONTRACT_JOBS = registerJobs([recordJob, retryJob]);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const newToken = () => randomBytes(6).toString('hex');

/** Runs the contract on queues made by `makeQueue`, each started with the test context's services. */
export function describeJobsContract(label: string, makeQueue: (services: Services) => Jobs): void {
  describe(`${label}: the jobs contract`, () => {
    let t: TestContext;
    const queues: Jobs[] = [];

    beforeAll(async () => {
      t = await createTestContext();
    });
    afterAll(async () => {
      for (const queue of queues) await queue.close();
      await t.close();
    });

    async function started(): Promise<Jobs> {
      const queue = makeQueue(t.services);
      queues.push(queue);
      await queue.startWorkers({}, { concurrency: 4, services: t.services, jobs: CONTRACT_JOBS });
      return queue;
    }

    it('runs a job by name with its payload and refuses an invalid payload on enqueue', async () => {
      const queue = await started();
      const token = newToken();
      await queue.enqueue('contract.record', { token });
      await until(() => runsOf(token).length === 1, 'the job');
      expect(runsOf(token)[0]).toMatchObject({ attempt: 1, attempts: 1 });
      await expect(queue.enqueue('contract.record', { token: '' })).rejects.toThrow(
        /Invalid payload for job contract\.record/,
      );
    });

    it('runs a delayed job no earlier than its delay', async () => {
      const queue = await started();
      const token = newToken();
      const start = Date.now();
      await queue.enqueue('contract.record', { token }, { delayMs: 300 });
      await until(() => runsOf(token).length === 1, 'the delayed job');
      expect((runsOf(token)[0]?.at ?? 0) - start).toBeGreaterThanOrEqual(290);
    });

    it('retries a failing job with its backoff, then records the failure once', async () => {
      const queue = await started();
      const token = newToken();
      await queue.enqueue('contract.retry', { token, fail: true });
      await until(() => failures.has(token), 'the recorded failure');
      await sleep(300);
      const attempts = runsOf(token);
      expect(attempts.map((r) => r.attempt)).toEqual([1, 2, 3]);
      const [first, second, third] = attempts.map((r) => r.at);
      // Exponential from 100 ms: about 100 ms, then about 200 ms.
      expect((second ?? 0) - (first ?? 0)).toBeGreaterThanOrEqual(95);
      expect((third ?? 0) - (second ?? 0)).toBeGreaterThanOrEqual(195);
      expect(failures.get(token)).toEqual([{ attempt: 3, message: 'attempt 3 failed' }]);
    });

    it('runs a job id enqueued twice once', async () => {
      const queue = await started();
      const token = newToken();
      await queue.enqueue('contract.record', { token }, { jobId: `once-${token}`, delayMs: 100 });
      await queue.enqueue('contract.record', { token }, { jobId: `once-${token}` });
      await until(() => runsOf(token).length === 1, 'the job');
      await sleep(300);
      expect(runsOf(token)).toHaveLength(1);
    });

    it('runs a repeatable job at least twice and no more once the queue is closed', async () => {
      const queue = await started();
      const token = newToken();
      await queue.schedule('contract.record', { token }, { everyMs: 150 });
      await until(() => runsOf(token).length >= 2, 'two runs of the schedule');
      await queue.close();
      const after = runsOf(token).length;
      await sleep(500);
      expect(runsOf(token)).toHaveLength(after);
    });

    it('refuses a malformed daily time', async () => {
      const queue = await started();
      await expect(
        queue.schedule('contract.record', { token: newToken() }, { dailyAtUtc: '25:00' }),
      ).rejects.toThrow(/HH:MM/);
    });
  });
}
