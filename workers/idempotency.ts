// Idempotency keys (core/idempotency.ts) are answered for 24 hours; a key past that is taken over by
// its next use anyway, so this daily job only keeps the table from growing: it deletes keys kept
// past their 24 hours and claims whose process died (lease lapsed, no answer).
import { z } from 'zod';
import { deleteExpiredIdempotencyKeys } from '../core/idempotency.ts';
import { defineJob } from '../core/jobs.ts';

const expirePayload = z.object({}).describe('No options: every expired key is deleted');

declare module '../core/jobs.ts' {
  interface JobCatalog {
    /** Delete REST idempotency keys past their 24 hours, and abandoned claims. */
    'idempotency.expire': z.output<typeof expirePayload>;
  }
}

/** Not retried: the next day's run deletes whatever this one missed. */
export const expireIdempotencyKeysJob = defineJob({
  name: 'idempotency.expire',
  payload: expirePayload,
  attempts: 1,
  async handler(_payload, { services }) {
    const deleted = await deleteExpiredIdempotencyKeys(services);
    if (deleted > 0) services.logger.info({ deleted }, 'expired idempotency keys deleted');
  },
});
