// The estimate expiry: once a day (workers/runtime.ts schedules it at 00:10 UTC), every draft or
// sent estimate whose valid_until is before today (UTC) becomes expired (tools/estimates/store.ts).
// Idempotent: a rerun finds nothing left to move.
import { z } from 'zod';
import { defineJob } from '../core/jobs.ts';
import type { Services } from '../core/services.ts';
import { expireEstimates as expireDue } from '../tools/estimates/store.ts';

const expirePayload = z.object({
  orgId: z.string().optional().describe('Only this organization (every organization when absent)'),
});

declare module '../core/jobs.ts' {
  interface JobCatalog {
    /** The daily expiry of estimates past their valid_until. */
    'estimates.expire': z.output<typeof expirePayload>;
  }
}

/** Expires what is past its validity on `now`'s UTC day; returns the ids expired. */
export async function expireEstimates(
  services: Services,
  now = new Date(),
  orgId?: string,
): Promise<string[]> {
  return expireDue(services.db.system, now, orgId);
}

/** A failed run is not retried: the next day's run catches up (it takes everything past due). */
export const expireEstimatesJob = defineJob({
  name: 'estimates.expire',
  payload: expirePayload,
  attempts: 1,
  async handler({ orgId }, { services }) {
    const expired = await expireEstimates(services, new Date(), orgId);
    services.logger.info({ expired: expired.length }, 'estimates expired');
  },
});
