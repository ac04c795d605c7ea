// The proposal expiry: once a day at 00:15 UTC, every draft or sent proposal whose valid_until has
// passed becomes expired (tools/proposals/store.ts), in every organization. Idempotent: a rerun
// finds nothing left to expire. Declared by the area (index.ts `jobs`, `schedules`).
import { dailyJob, type OrgDailyPayload, orgDailyPayload } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { expireProposals } from './store.ts';

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** The daily expiry of proposals past valid_until. */
    'proposals.expire': OrgDailyPayload;
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

export const proposalsExpiry = dailyJob({
  name: 'proposals.expire',
  payload: orgDailyPayload,
  daily: {},
  atUtc: '00:15',
  run: (services, { orgId }, now) => expireDueProposals(services, now, orgId),
  log: { message: 'proposals expired', field: 'expired' },
});
