// The forecast snapshot: once a day at 00:05 UTC, writes today's weighted pipeline and commit of
// every organization (store.ts). Idempotent per day: a rerun the same day replaces that day's rows.
// Declared by the area (index.ts `jobs`, `schedules`).
import { dailyJob, type OrgDailyPayload, orgDailyPayload } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { utcDay, writeSnapshots } from './store.ts';

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** One daily forecast snapshot of every organization. */
    'forecast.snapshot': OrgDailyPayload;
  }
}

/** Writes the snapshot of `now`'s UTC day; returns the rows written. */
export async function snapshotForecasts(
  services: Services,
  now = new Date(),
  orgId?: string,
): Promise<number> {
  return writeSnapshots(services.db.system, utcDay(now), orgId);
}

export const forecastSnapshot = dailyJob({
  name: 'forecast.snapshot',
  payload: orgDailyPayload,
  daily: {},
  atUtc: '00:05',
  run: (services, { orgId }, now) => snapshotForecasts(services, now, orgId),
  log: { message: 'forecast snapshot written', field: 'rows' },
});
