// Locks in the jobs contract on BullMQ with a real Redis: typed enqueue, delays, retries with backoff then a recorded failure, job-id dedupe, repeatable jobs that stop on shutdown.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { BullMqQueue } from '../../core/queue-bullmq.ts';
import { describeJobsContract } from '../support/jobs-contract.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runPrefix = `crmtest-jobs-${randomBytes(4).toString('hex')}`;
let prefixSeq = 0;

afterAll(async () => {
  const cleanup = new Redis(REDIS_URL);
  const keys = await cleanup.keys(`${runPrefix}*`);
  if (keys.length > 0) await cleanup.del(...keys);
  cleanup.disconnect();
});

// A unique key prefix per queue, so no test sees another's jobs or schedules.
describeJobsContract(
  'BullMQ',
  (services) =>
    new BullMqQueue(REDIS_URL, { logger: services.logger, prefix: `${runPrefix}-${prefixSeq++}` }),
);

describe('closing a BullMQ queue', () => {
  it('right after creating it, at any point of its start, rejects nothing unhandled', async () => {
    // The start asks Redis its version once the connection is ready; closing during that INFO used
    // to fail it after BullMQ dropped its listeners ("Connection is closed", unhandled). The sweep
    // of delays closes before, during and after that moment.
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      for (let delayMs = 0; delayMs < 40; delayMs++) {
        const queue = new BullMqQueue(REDIS_URL, {
          logger: createLogger('silent'),
          prefix: `${runPrefix}-close-${delayMs}`,
        });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        await queue.close();
      }
      // Rejections of the last closes surface on the following turns of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      process.off('unhandledRejection', record);
    }
    expect(unhandled).toEqual([]);
  });
});
