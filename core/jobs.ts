// The job port and its declarations: each background job is declared once with `defineJob` (its
// name, zod payload, attempts, backoff and handler) by the area that owns it (`defineArea({ jobs })`,
// core/area.ts) or by the kernel (core/kernel-jobs.ts). tools/index.ts collects them into one
// registry (`registerJobs`), which is handed to the queues explicitly; both queues
// (core/queue-in-process.ts, core/queue-bullmq.ts) run a job the same way: the payload is checked on
// enqueue and again on run, failed attempts are retried with the declared backoff, and `onFailure`
// hears about the last one. No module-level state: two registries in one process do not meet.
//
// The database is the truth, the queue a wake-up. A job whose outcome matters (a delivery, a
// scheduled email, an invoice reminder) is a row with a status and a due time (`run_at`,
// `next_attempt_at`) written in the transaction that decides it; the job only carries the row id.
// The handler reads the row, does nothing if it is no longer due, and writes the outcome back. A
// sweeper (`requeueDue`, run on a timer by workers/runtime.ts) re-enqueues rows that are due but
// whose job was lost (an in-process queue after a restart, a Redis without persistence), with a
// job id derived from the row and its attempt, so a job that is merely waiting is not doubled.
import { z } from 'zod';
import type { Config } from './config.ts';
import type { Services } from './services.ts';

/**
 * Every job kind and its payload. Empty here on purpose: each job's module adds its entry by
 * declaration merging next to its zod schema (`declare module '../core/jobs.ts'`), so the kernel
 * knows no area while `enqueue` stays type-checked by name.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in each job's module
export interface JobCatalog {}
export type JobName = keyof JobCatalog;

declare module './services.ts' {
  interface Services {
    /**
     * Background jobs: enqueue, schedule. In-process without REDIS_URL, BullMQ with it;
     * workers/runtime.ts starts the workers. Tools enqueue in afterCommit hooks.
     */
    jobs: Jobs;
  }
}

export interface EnqueueOptions {
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number;
  /**
   * Deduplication key: while a job with this id is waiting, retrying or running, enqueueing it
   * again does nothing. Delivery attempts use `<deliveryId>` for the first and `<deliveryId>:<n>` after.
   */
  jobId?: string;
}

/** When a repeatable job runs: every so many milliseconds, or once a day at a UTC time. */
export type Repeat = { everyMs: number } | { dailyAtUtc: string };

/** What a handler learns about the attempt it makes. */
export interface JobRun {
  name: JobName;
  jobId: string | undefined;
  /** 1 for the first attempt. */
  attempt: number;
  /** The job's attempts in all (its definition's `attempts`, 1 for an undefined job). */
  attempts: number;
}

export type JobHandler<N extends JobName> = (payload: JobCatalog[N], run: JobRun) => Promise<void>;
/** Handlers by job name; a job without one here runs its definition's handler (core/jobs.ts). */
export type JobHandlers = { [N in JobName]?: JobHandler<N> };

export interface StartWorkersOptions {
  concurrency: number;
  /**
   * The declared jobs (tools/index.ts `JOBS`): what the workers run and what enqueue checks
   * against from now on. Without it, the registry the queue was built with.
   */
  jobs?: JobRegistry;
  /**
   * What definitions' handlers receive (workers/runtime.ts passes them). Without it only the jobs
   * in `handlers` can run.
   */
  services?: Services;
}

/** The job port: what `services.jobs` offers. */
export interface Jobs {
  readonly kind: 'in-process' | 'bullmq';
  /** Validates the payload against the job's definition, then queues it. */
  enqueue<N extends JobName>(name: N, payload: JobCatalog[N], options?: EnqueueOptions): Promise<void>;
  /** Adds many jobs of one kind at once (one Redis round trip with BullMQ), e.g. a relay batch. */
  enqueueMany<N extends JobName>(
    name: N,
    jobs: ReadonlyArray<{ payload: JobCatalog[N]; options?: EnqueueOptions }>,
  ): Promise<void>;
  /**
   * Runs a job repeatedly, one schedule per job name: calling it again replaces the schedule.
   * In-process a timer of this process; with BullMQ a job scheduler shared by every node, so a
   * cluster runs the job once per tick, not once per node.
   */
  schedule<N extends JobName>(name: N, payload: JobCatalog[N], repeat: Repeat): Promise<void>;
  /** Starts executing jobs (crm serve's embedded workers, or crm worker). */
  startWorkers(handlers: JobHandlers, options: StartWorkersOptions): Promise<void>;
  /** Stops taking jobs and schedules, waits for running ones, releases connections. */
  close(): Promise<void>;
}

/** The wait before the attempt after a failed one: the same delay each time, or doubling. */
export interface Backoff {
  type: 'fixed' | 'exponential';
  delayMs: number;
}

/** What a definition's handler receives besides its payload. */
export interface JobContext extends JobRun {
  services: Services;
}

export interface JobDefinition<N extends JobName> {
  name: N;
  payload: z.ZodType<JobCatalog[N]>;
  /** Attempts in all, the first included (default 1: no retry). */
  attempts?: number;
  /** Default: fixed, 1 second. */
  backoff?: Backoff;
  handler(payload: JobCatalog[N], context: JobContext): Promise<void>;
  /** Called once the last attempt failed, before the job is dropped: record the failure in its row. */
  onFailure?(payload: JobCatalog[N], error: unknown, context: JobContext): Promise<void>;
}

/** A run function with the payload type erased: the queues hold jobs of every kind in one place. */
export type JobRunner = (data: unknown, run: JobRun) => Promise<void>;

/** A defined job as the queues see it (its payload type erased, so one list holds every kind). */
export interface DefinedJob {
  name: JobName;
  attempts: number;
  backoff: Backoff;
  /** Throws when `data` is not a valid payload of this job. */
  check(data: unknown): void;
  /** The run function: the job's entry in `handlers` if any, else its definition's handler with `services`. */
  runner(handlers: JobHandlers, services: Services | undefined): JobRunner | undefined;
}

/** Every declared job by name, as tools/index.ts collects them and hands them to the queues. */
export type JobRegistry = ReadonlyMap<string, DefinedJob>;

/** A registry with no job: a queue built without one runs only the handlers it is given. */
export const NO_JOBS: JobRegistry = new Map();

const DEFAULT_BACKOFF: Backoff = { type: 'fixed', delayMs: 1000 };

function parsePayload<N extends JobName>(definition: JobDefinition<N>, data: unknown): JobCatalog[N] {
  const result = definition.payload.safeParse(data);
  if (!result.success)
    throw new Error(`Invalid payload for job ${definition.name}: ${z.prettifyError(result.error)}`);
  return result.data;
}

/** Checks a job's declaration and erases its payload type; it takes effect once registered. */
export function defineJob<N extends JobName>(definition: JobDefinition<N>): DefinedJob {
  const attempts = definition.attempts ?? 1;
  if (!Number.isInteger(attempts) || attempts < 1)
    throw new Error(`Job ${definition.name}: attempts must be >= 1`);
  return {
    name: definition.name,
    attempts,
    backoff: definition.backoff ?? DEFAULT_BACKOFF,
    check: (data) => {
      parsePayload(definition, data);
    },
    runner(handlers, services) {
      const given = handlers[definition.name];
      if (given) return (data, run) => given(parsePayload(definition, data), run);
      if (!services) return undefined;
      return async (data, run) => {
        const payload = parsePayload(definition, data);
        const context: JobContext = { ...run, services };
        try {
          await definition.handler(payload, context);
        } catch (err) {
          if (run.attempt >= run.attempts && definition.onFailure)
            await definition.onFailure(payload, err, context);
          throw err;
        }
      };
    },
  };
}

/**
 * A job the queue runs once and never retries: a sender whose row schedules its own retries as new
 * jobs named after the row's next attempt (core/leased-rows.ts, webhook deliveries), or a daily job
 * whose next run catches up. `run` makes the attempt; what it returns (a sender's outcome, which
 * tests read) the queue ignores.
 */
export function singleAttemptJob<N extends JobName>(spec: {
  name: N;
  payload: z.ZodType<JobCatalog[N]>;
  run(services: Services, payload: JobCatalog[N]): Promise<unknown>;
}): DefinedJob {
  return defineJob({
    name: spec.name,
    payload: spec.payload,
    attempts: 1,
    async handler(payload, { services }) {
      await spec.run(services, payload);
    },
  });
}

/** The registry of `jobs`; a name declared twice (two areas, or an area and the kernel) throws. */
export function registerJobs(jobs: readonly DefinedJob[]): JobRegistry {
  const registry = new Map<string, DefinedJob>();
  for (const job of jobs) {
    if (registry.has(job.name)) throw new Error(`Job ${job.name} is defined twice`);
    registry.set(job.name, job);
  }
  return registry;
}

/**
 * A repeatable run of a declared job: the job, its payload and its repeat, both read from the
 * configuration when the runtime starts (workers/runtime.ts), e.g. TRASH_PURGE_INTERVAL_MS.
 */
export interface ScheduleDefinition<N extends JobName> {
  job: N;
  payload(config: Config): JobCatalog[N];
  repeat(config: Config): Repeat;
}

/** A declared schedule with its payload type erased. */
export interface Schedule {
  job: JobName;
  /** Installs the schedule on the queue (one per job name: a later call replaces it). */
  start(jobs: Pick<Jobs, 'schedule'>, config: Config): Promise<void>;
}

export function defineSchedule<N extends JobName>(definition: ScheduleDefinition<N>): Schedule {
  return {
    job: definition.job,
    start: (jobs, config) =>
      jobs.schedule(definition.job, definition.payload(config), definition.repeat(config)),
  };
}

/**
 * A sweep: finds rows that are due but whose job was lost (an in-process queue after a restart, a
 * Redis without persistence) or whose claim's lease expired, and wakes them; returns how many. Run
 * by the runtime's sweeper loop; `graceMs` is how long past due a row must be, so a job merely
 * waiting in the queue is not doubled.
 */
export interface Sweep {
  name: string;
  run(services: Services, graceMs: number): Promise<number>;
}

/**
 * A relay: one pass moving committed rows on (the outbox to webhook deliveries), run by the
 * runtime's relay loop every RELAY interval; it returns true when more rows are waiting, to run
 * again at once.
 */
export interface Relay {
  name: string;
  pass(services: Services): Promise<boolean>;
}

/** Throws unless every schedule names a job of the registry (a schedule of an undeclared job never runs). */
export function checkSchedules(registry: JobRegistry, schedules: readonly Schedule[]): void {
  for (const schedule of schedules) {
    if (!registry.has(schedule.job))
      throw new Error(`A schedule names job ${schedule.job}, which no area or the kernel declares`);
  }
}

/** The payload of a daily job over every organization, or one (tests, an operator's rerun). */
export const orgDailyPayload = z.object({
  orgId: z.string().optional().describe('Only this organization (every organization when absent)'),
});
export type OrgDailyPayload = z.output<typeof orgDailyPayload>;

/** A daily job's parts: the job and its schedule, declared together by the area. */
export interface DailyJob {
  job: DefinedJob;
  schedule: Schedule;
}

/**
 * The shape every daily job of an area shares: one run a day at `atUtc`, not retried (the next day's
 * run catches up, each run takes everything that is due), and one log line with the count.
 */
export function dailyJob<N extends JobName>(spec: {
  name: N;
  payload: z.ZodType<JobCatalog[N]>;
  /** What the schedule enqueues each day. */
  daily: JobCatalog[N];
  /** HH:MM in UTC. */
  atUtc: string;
  /** One run; returns how many rows it touched. */
  run(services: Services, payload: JobCatalog[N], now: Date): Promise<number>;
  /** The log line of a run, and the field that carries the count. */
  log: { message: string; field: string; onlyWhenAny?: boolean };
}): DailyJob {
  parseDailyAt(spec.atUtc);
  const job = singleAttemptJob({
    name: spec.name,
    payload: spec.payload,
    async run(services, payload) {
      const count = await spec.run(services, payload, new Date());
      if (count > 0 || !spec.log.onlyWhenAny)
        services.logger.info({ [spec.log.field]: count }, spec.log.message);
    },
  });
  const schedule = defineSchedule({
    job: spec.name,
    payload: () => spec.daily,
    repeat: () => ({ dailyAtUtc: spec.atUtc }),
  });
  return { job, schedule };
}

/** The wait after failed attempt number `attempt` (1-based), as BullMQ computes it. */
export function retryDelayMs(backoff: Backoff, attempt: number): number {
  if (backoff.type === 'fixed') return backoff.delayMs;
  return Math.round(2 ** (attempt - 1) * backoff.delayMs);
}

const DAILY_AT = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Hours and minutes of a `dailyAtUtc` time ("HH:MM", 24-hour, UTC); throws on anything else. */
export function parseDailyAt(value: string): { hour: number; minute: number } {
  const match = DAILY_AT.exec(value);
  if (!match) throw new Error(`dailyAtUtc must be HH:MM (24-hour, UTC), got "${value}"`);
  return { hour: Number(match[1]), minute: Number(match[2]) };
}

/** Milliseconds from `now` to the next run of a repeat (for a daily time: today's if still ahead). */
export function nextRunDelayMs(repeat: Repeat, now = new Date()): number {
  if ('everyMs' in repeat) return repeat.everyMs;
  const { hour, minute } = parseDailyAt(repeat.dailyAtUtc);
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hour, minute));
  if (next.getTime() <= now.getTime()) next.setUTCDate(next.getUTCDate() + 1);
  return next.getTime() - now.getTime();
}

/** Throws unless the repeat is a positive whole number of milliseconds or a valid daily time. */
export function checkRepeat(repeat: Repeat): void {
  if ('everyMs' in repeat) {
    if (!Number.isInteger(repeat.everyMs) || repeat.everyMs < 1)
      throw new Error('everyMs must be a positive whole number of milliseconds');
    return;
  }
  parseDailyAt(repeat.dailyAtUtc);
}

/** A row that is due, as a sweeper found it: the payload of its job and the id of the attempt due. */
export interface DueJob<N extends JobName> {
  payload: JobCatalog[N];
  jobId: string;
}

/**
 * The sweeper's half of "the database is the truth": re-enqueues jobs for rows found due. The job
 * id names the row and its attempt, so a job still waiting in the queue absorbs the duplicate.
 */
export async function requeueDue<N extends JobName>(
  queue: Pick<Jobs, 'enqueueMany'>,
  name: N,
  due: ReadonlyArray<DueJob<N>>,
): Promise<number> {
  await queue.enqueueMany(
    name,
    due.map((job) => ({ payload: job.payload, options: { jobId: job.jobId } })),
  );
  return due.length;
}
