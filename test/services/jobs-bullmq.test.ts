// Locks in the jobs contract on BullMQ with a real Redis: typed enqueue, delays, retries with backoff then a recorded failure, job-id dedupe, repeatable jobs that stop on shutdown.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
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
