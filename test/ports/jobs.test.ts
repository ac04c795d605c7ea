// Locks in the jobs contract on the in-process queue: typed enqueue, delays, retries with backoff then a recorded failure, job-id dedupe, repeatable jobs that stop on shutdown.
import { describe, expect, it } from 'vitest';
import { nextRunDelayMs } from '../../core/jobs.ts';
import { InProcessQueue } from '../../core/queue-in-process.ts';
import { describeJobsContract } from '../support/jobs-contract.ts';

describeJobsContract('in-process', (services) => new InProcessQueue(services.logger));

describe('daily schedules', () => {
  it('run at the next HH:MM in UTC: later today, or tomorrow once passed', () => {
    const now = new Date('2030-01-01T10:00:00Z');
    expect(nextRunDelayMs({ dailyAtUtc: '10:30' }, now)).toBe(30 * 60_000);
    expect(nextRunDelayMs({ dailyAtUtc: '10:00' }, now)).toBe(24 * 3_600_000);
    expect(nextRunDelayMs({ dailyAtUtc: '02:15' }, now)).toBe((16 * 60 + 15) * 60_000);
  });
});
