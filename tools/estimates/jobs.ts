// The estimate expiry: once a day at 00:10 UTC, every draft or sent estimate whose valid_until is
// before today (UTC) becomes expired (tools/estimates/store.ts). Idempotent: a rerun finds nothing
// left to move. Declared by the area (index.ts `jobs`, `schedules`).
import { dailyJob, type OrgDailyPayload, orgDailyPayload } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { expireEstimates as expireDue } from './store.ts';

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** The daily expiry of estimates past their valid_until. */
    'estimates.expire': OrgDailyPayload;
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

export const estimatesExpiry = dailyJob({
  name: 'estimates.expire',
  payload: orgDailyPayload,
  daily: {},
  atUtc: '00:10',
  run: async (services, { orgId }, now) => (await expireEstimates(services, now, orgId)).length,
  log: { message: 'estimates expired', field: 'expired' },
});
