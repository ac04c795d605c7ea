// The kernel's own background work, declared in the same shape as an area's (core/area.ts
// `AreaBackground`): the mail outbox's sender and its sweep (core/mail-send.ts), the daily scrub of
// old mail content (core/mail-scrub.ts), the daily expiry of REST idempotency keys and of relayed
// outbox rows (core/outbox-expiry.ts), and the fold of the live-count ledger every minute
// (core/live-counts.ts).
// tools/index.ts adds them to what the areas declare.
import { z } from 'zod';
import { deleteExpiredIdempotencyKeys } from './idempotency.ts';
import { type DefinedJob, dailyJob, type Schedule, type Sweep } from './jobs.ts';
import { liveCountsFold } from './live-counts.ts';
import { mailScrub } from './mail-scrub.ts';
import { mailSendJob, mailSweep, type OutboxAccounts } from './mail-send.ts';
import { deleteRelayedOutboxRows } from './outbox-expiry.ts';

// Idempotency keys (core/idempotency.ts) are answered for 24 hours; a key past that is taken over by
// its next use anyway, so this daily job only keeps the table from growing: it deletes keys kept
// past their 24 hours and claims whose process died (lease lapsed, no answer).
const expirePayload = z.object({}).describe('No options: every expired key is deleted');

declare module './jobs.ts' {
  interface JobCatalog {
    /** Delete REST idempotency keys past their 24 hours, and abandoned claims. */
    'idempotency.expire': z.output<typeof expirePayload>;
    /** Delete outbox rows relayed to their deliveries more than OUTBOX_KEEP_DAYS ago. */
    'outbox.expire': z.output<typeof outboxExpirePayload>;
  }
}

/** Daily at 00:25 UTC; not retried: the next day's run deletes whatever this one missed. */
const idempotencyExpiry = dailyJob({
  name: 'idempotency.expire',
  payload: expirePayload,
  daily: {},
  atUtc: '00:25',
  run: (services, _payload, now) => deleteExpiredIdempotencyKeys(services, now),
  log: { message: 'expired idempotency keys deleted', field: 'deleted', onlyWhenAny: true },
});

const outboxExpirePayload = z.object({}).describe('No options: every relayed row past its days is deleted');

/** Daily at 00:35 UTC; not retried: the next day's run deletes whatever this one missed. */
const outboxExpiry = dailyJob({
  name: 'outbox.expire',
  payload: outboxExpirePayload,
  daily: {},
  atUtc: '00:35',
  run: (services, _payload, now) => deleteRelayedOutboxRows(services, now),
  log: { message: 'relayed outbox rows deleted', field: 'deleted', onlyWhenAny: true },
});

export interface KernelBackground {
  jobs: DefinedJob[];
  schedules: Schedule[];
  sweeps: Sweep[];
}

/** The kernel's jobs, schedules and sweeps; the outbox sends through the accounts `accounts` finds. */
export function kernelBackground(accounts: OutboxAccounts): KernelBackground {
  return {
    jobs: [mailSendJob(accounts), mailScrub.job, idempotencyExpiry.job, outboxExpiry.job, liveCountsFold.job],
    schedules: [
      mailScrub.schedule,
      idempotencyExpiry.schedule,
      outboxExpiry.schedule,
      liveCountsFold.schedule,
    ],
    sweeps: [mailSweep],
  };
}
