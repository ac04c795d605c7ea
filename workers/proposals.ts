// The proposal expiry: once a day (workers/runtime.ts schedules it), every draft or sent proposal
// whose valid_until has passed becomes expired (tools/proposals/store.ts), in every organization.
// Idempotent: a rerun finds nothing left to expire.
import { z } from 'zod';
import { defineJob } from '../core/jobs.ts';
import type { Services } from '../core/services.ts';
import { expireProposals } from '../tools/proposals/store.ts';

const expirePayload = z.object({
  orgId: z.string().optional().describe('Only this organization (every organization when absent)'),
});

declare module '../core/jobs.ts' {
  interface JobCatalog {
    /** The daily expiry of proposals past valid_until. */
    'proposals.expire': z.output<typeof expirePayload>;
  }
}

/** Expires what is past valid_until on `now`'s UTC day; returns how many. */
export async function expireDueProposals(
  services: Services,
  now = new Date(),
  orgId?: string,
): Promise<number> {
  return expireProposals(services.db.system, now, orgId);
}

/** A failed run is not retried: the next day's run expires the same proposals. */
export const expireProposalsJob = defineJob({
  name: 'proposals.expire',
  payload: expirePayload,
  attempts: 1,
  async handler({ orgId }, { services }) {
    const expired = await expireDueProposals(services, new Date(), orgId);
    services.logger.info({ expired }, 'proposals expired');
  },
});
