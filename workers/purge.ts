// The trash purge: records stay restorable in the trash for TRASH_RETENTION_DAYS, then this job
// deletes them for good (a lead takes its contacts, opportunities, activities and tasks with it
// through the foreign keys' cascade). It runs on a timer in every process that runs background
// work; two processes purging at once only delete the same rows once, so no coordination is needed.
import type { Services } from '../core/services.ts';
import { purgeTrash } from '../core/trash.ts';
import { TRASH_TYPES } from '../tools/trash.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows per DELETE statement: small enough that each statement is short, large enough to be quick. */
const DEFAULT_BATCH = 1000;
/** The first pass runs this soon after start (or after one interval, when that is shorter). */
const FIRST_RUN_DELAY_MS = 10_000;

export interface TrashPurgeOptions {
  intervalMs: number;
  retentionDays: number;
  batchSize?: number;
}

export interface TrashPurge {
  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void>;
}

/** One pass: deletes what went to the trash more than `retentionDays` ago; returns the counts per type. */
export async function purgeExpiredTrash(
  services: Services,
  retentionDays: number,
  batchSize = DEFAULT_BATCH,
  now = new Date(),
): Promise<Record<string, number>> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS);
  return purgeTrash(services.db.system, TRASH_TYPES, cutoff, batchSize);
}

export function startTrashPurge(services: Services, options: TrashPurgeOptions): TrashPurge {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(run, delayMs);
    // Never keeps the process alive on its own.
    timer.unref();
  };
  const run = () => {
    timer = undefined;
    current = (async () => {
      try {
        const counts = await purgeExpiredTrash(services, options.retentionDays, options.batchSize);
        const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
        if (total > 0) services.logger.info({ counts, retentionDays: options.retentionDays }, 'trash purged');
      } catch (err) {
        // A failed pass (database restarting, lock timeout) is retried at the next tick; the process lives on.
        services.logger.error({ err }, 'trash purge failed');
      }
      schedule(options.intervalMs);
    })();
  };
  schedule(Math.min(options.intervalMs, FIRST_RUN_DELAY_MS));
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
