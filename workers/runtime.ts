// The runtime of background work, and nothing else: it runs what the kernel and the areas declare
// (tools/index.ts `JOBS`, `SCHEDULES`, `SWEEPS`, `RELAYS`, from `defineArea({ jobs, schedules,
// sweeps, relays })`, core/area.ts): the job workers, the relay loop (the outbox to webhook
// deliveries), the sweeper loop (each declared sweep wakes its due rows whose job was lost: after a
// restart of the in-process runner, whose jobs live in memory, or of a Redis without persistence),
// and the repeatable jobs. `crm serve` runs it in-process (unless told not to), `crm worker` as its
// own process. A new job, schedule or sweep is a declaration in its area, never a line here.
import type { Config } from '../core/config.ts';
import type { JobHandlers, JobRegistry, Relay, Schedule, Sweep } from '../core/jobs.ts';
import type { Services } from '../core/services.ts';
import { checkSettings } from '../core/settings.ts';
import { CATALOGUE, JOBS, RELAYS, SCHEDULES, SWEEPS } from '../tools/index.ts';

export interface BackgroundWorkOptions {
  relayIntervalMs?: number;
  sweepIntervalMs?: number;
  /**
   * How long past its due time a row must be before a sweep re-enqueues it, so a job that is
   * merely queued behind others is not doubled.
   */
  sweepGraceMs?: number;
  concurrency?: number;
  /**
   * Handlers replacing some jobs' declared ones (tests pass recording ones, or the delivery with
   * their receiver's certificate). Jobs not named here run their declarations.
   */
  handlers?: JobHandlers;
  /** How often the repeatable trash purge runs; TRASH_PURGE_INTERVAL_MS by default. */
  purgeIntervalMs?: number;
  /** Days trashed records are kept before the purge deletes them; TRASH_RETENTION_DAYS by default. */
  trashRetentionDays?: number;
  /** What runs (tests of the runtime itself); the declarations of tools/index.ts by default. */
  declared?: Declared;
}

/** What the runtime runs. */
export interface Declared {
  jobs: JobRegistry;
  schedules: readonly Schedule[];
  sweeps: readonly Sweep[];
  relays: readonly Relay[];
}

const DECLARED: Declared = { jobs: JOBS, schedules: SCHEDULES, sweeps: SWEEPS, relays: RELAYS };

export interface BackgroundWork {
  /**
   * Stops the relay and sweeper loops and waits for a pass in progress. The queue, with its
   * workers and the in-process schedules, closes with the services.
   */
  stop(): Promise<void>;
}

/** Runs `pass` now and then every `intervalMs`, never two at once; a pass returning true reruns at once. */
function loop(
  name: string,
  services: Services,
  intervalMs: number,
  pass: () => Promise<boolean>,
): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const run = () => {
    timer = undefined;
    current = (async () => {
      let again = true;
      while (again && !stopped) {
        try {
          again = await pass();
        } catch (err) {
          services.logger.error({ err }, `${name} failed`);
          again = false;
        }
      }
      if (!stopped) {
        timer = setTimeout(run, intervalMs);
        timer.unref();
      }
    })();
  };
  run();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}

/** The configuration the schedules read, with the runtime's overrides of the trash purge. */
function scheduleConfig(config: Config, options: BackgroundWorkOptions): Config {
  return {
    ...config,
    trashRetentionDays: options.trashRetentionDays ?? config.trashRetentionDays,
    trashPurgeIntervalMs: options.purgeIntervalMs ?? config.trashPurgeIntervalMs,
  };
}

export async function startBackgroundWork(
  services: Services,
  options: BackgroundWorkOptions = {},
): Promise<BackgroundWork> {
  const declared = options.declared ?? DECLARED;
  // The areas' own variables, checked before any work starts (core/settings.ts).
  checkSettings(services.config, CATALOGUE.settings);
  const relayIntervalMs = options.relayIntervalMs ?? 250;
  const sweepIntervalMs = options.sweepIntervalMs ?? 5000;
  const sweepGraceMs = options.sweepGraceMs ?? 30_000;
  const concurrency = options.concurrency ?? services.config.workerConcurrency;
  await services.jobs.startWorkers(options.handlers ?? {}, { concurrency, services, jobs: declared.jobs });
  const relays = declared.relays.map((relay) =>
    loop(relay.name, services, relayIntervalMs, () => relay.pass(services)),
  );
  const sweeper = loop('sweeper', services, sweepIntervalMs, async () => {
    // Each sweep on its own: one failing (its table locked, say) does not keep the others from running.
    for (const sweep of declared.sweeps) {
      try {
        await sweep.run(services, sweepGraceMs);
      } catch (err) {
        services.logger.error({ err, sweep: sweep.name }, 'sweep failed');
      }
    }
    // Never rerun at once: re-enqueued rows stay due until their job runs, so they would be found again.
    return false;
  });
  const config = scheduleConfig(services.config, options);
  for (const schedule of declared.schedules) await schedule.start(services.jobs, config);
  return {
    async stop() {
      await Promise.all([...relays.map((relay) => relay.stop()), sweeper.stop()]);
    },
  };
}
