// The forecast snapshot: once a day (workers/runtime.ts schedules it at FORECAST_SNAPSHOT_AT UTC),
// writes today's weighted pipeline and commit of every organization (tools/forecast/store.ts).
// Idempotent per day: a rerun the same day replaces that day's rows.
import { z } from 'zod';
import { defineJob } from '../core/jobs.ts';
import type { Services } from '../core/services.ts';
import { utcDay, writeSnapshots } from '../tools/forecast/store.ts';

const snapshotPayload = z.object({
  orgId: z.string().optional().describe('Only this organization (every organization when absent)'),
});

declare module '../core/jobs.ts' {
  interface JobCatalog {
    /** One daily forecast snapshot of every organization. */
    'forecast.snapshot': z.output<typeof snapshotPayload>;
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

/** A failed run is not retried: the next day's run takes a fresh snapshot. */
export const forecastSnapshotJob = defineJob({
  name: 'forecast.snapshot',
  payload: snapshotPayload,
  attempts: 1,
  async handler({ orgId }, { services }) {
    const rows = await snapshotForecasts(services, new Date(), orgId);
    services.logger.info({ rows }, 'forecast snapshot written');
  },
});
