// The trash purge: records stay restorable in the trash for TRASH_RETENTION_DAYS, then this job
// deletes them for good (a lead takes its contacts, opportunities, activities and tasks with it
// through the foreign keys' cascade). It is a repeatable job every TRASH_PURGE_INTERVAL_MS, declared
// by the trash area with the trash types the other areas declare: a timer of each process
// in-process, one BullMQ job scheduler for all with Redis. Two purges at once only delete the same
// rows once, so none is harmful.
import { z } from 'zod';
import { type DefinedJob, defineJob, defineSchedule, type Schedule } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { purgeTrash, type TrashType } from '../../core/trash.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows per DELETE statement: small enough that each statement is short, large enough to be quick. */
const DEFAULT_BATCH = 1000;

const purgePayload = z.object({
  retentionDays: z.number().int().min(1).describe('Days trashed records are kept'),
  batchSize: z.number().int().min(1).optional().describe('Rows per DELETE statement'),
});

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** One trash purge pass. */
    'trash.purge': z.output<typeof purgePayload>;
  }
}

/** One pass: deletes what went to the trash more than `retentionDays` ago; returns the counts per type. */
export async function purgeExpiredTrash(
  types: readonly TrashType[],
  services: Services,
  retentionDays: number,
  batchSize = DEFAULT_BATCH,
  now = new Date(),
): Promise<Record<string, number>> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS);
  return purgeTrash(services.db.system, types, cutoff, batchSize);
}

/** The purge job over `types` and its schedule (TRASH_PURGE_INTERVAL_MS, TRASH_RETENTION_DAYS). */
export function trashPurge(types: readonly TrashType[]): { job: DefinedJob; schedule: Schedule } {
  return {
    // A failed pass (database restarting, lock timeout) is not retried: the next tick is the retry.
    job: defineJob({
      name: 'trash.purge',
      payload: purgePayload,
      attempts: 1,
      async handler({ retentionDays, batchSize }, { services }) {
        const counts = await purgeExpiredTrash(types, services, retentionDays, batchSize);
        const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
        if (total > 0) services.logger.info({ counts, retentionDays }, 'trash purged');
      },
    }),
    schedule: defineSchedule({
      job: 'trash.purge',
      payload: (config) => ({ retentionDays: config.trashRetentionDays }),
      repeat: (config) => ({ everyMs: config.trashPurgeIntervalMs }),
    }),
  };
}
