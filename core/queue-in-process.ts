// The embedded default's job runner: timers in this process, at most `concurrency` jobs at once,
// de-duplication by job id while a job waits, retries or runs, retries with the job's declared
// backoff, and repeatable jobs on timers. Jobs do not survive a restart here; the handlers'
// durable state (rows with a status and a due time) does, and sweepers re-enqueue what is due.

import type {
  EnqueueOptions,
  JobCatalog,
  JobHandlers,
  JobName,
  JobRegistry,
  JobRun,
  Jobs,
  Repeat,
  StartWorkersOptions,
} from './jobs.ts';
import { checkRepeat, NO_JOBS, nextRunDelayMs, retryDelayMs } from './jobs.ts';
import type { Logger } from './logger.ts';
import type { Services } from './services.ts';

interface PendingJob {
  run: (attempt: number) => Promise<void>;
  jobId: string | undefined;
  name: JobName;
  attempt: number;
  attempts: number;
}

/** The longest delay a Node timer honours (2^31-1 ms); longer ones fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

export class InProcessQueue implements Jobs {
  readonly kind = 'in-process' as const;
  private handlers: JobHandlers | undefined;
  private services: Services | undefined;
  private concurrency = 1;
  private running = 0;
  private closed = false;
  private readonly ready: PendingJob[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly schedules = new Map<JobName, NodeJS.Timeout>();
  private readonly liveIds = new Set<string>();
  private readonly backlog: Array<() => void> = [];
  private readonly idleWaiters: Array<() => void> = [];

  /**
   * `registry`: the declared jobs (tools/index.ts `JOBS`), which enqueue checks and the workers run;
   * `startWorkers` may hand another. A job outside it runs unchecked with a given handler (tests).
   */
  constructor(
    private readonly logger: Logger,
    private registry: JobRegistry = NO_JOBS,
  ) {}

  private findJob(name: string) {
    return this.registry.get(name);
  }

  async enqueue<N extends JobName>(
    name: N,
    payload: JobCatalog[N],
    options: EnqueueOptions = {},
  ): Promise<void> {
    if (this.closed) throw new Error('The job queue is closed');
    const registered = this.findJob(name);
    registered?.check(payload);
    const { jobId } = options;
    if (jobId !== undefined) {
      if (this.liveIds.has(jobId)) return;
      this.liveIds.add(jobId);
    }
    const attempts = registered?.attempts ?? 1;
    const job: PendingJob = {
      name,
      jobId,
      attempt: 1,
      attempts,
      run: (attempt) => this.execute(name, payload, { name, jobId, attempt, attempts }),
    };
    this.later(job, Math.max(0, options.delayMs ?? 0));
  }

  async enqueueMany<N extends JobName>(
    name: N,
    jobs: ReadonlyArray<{ payload: JobCatalog[N]; options?: EnqueueOptions }>,
  ): Promise<void> {
    for (const job of jobs) await this.enqueue(name, job.payload, job.options);
  }

  async schedule<N extends JobName>(name: N, payload: JobCatalog[N], repeat: Repeat): Promise<void> {
    if (this.closed) throw new Error('The job queue is closed');
    checkRepeat(repeat);
    this.findJob(name)?.check(payload);
    const previous = this.schedules.get(name);
    if (previous) clearTimeout(previous);
    const tick = () => {
      // The job id keeps a slow run from piling up: a tick while it still runs is skipped.
      this.enqueue(name, payload, { jobId: `repeat:${name}` }).catch((err: unknown) =>
        this.logger.error({ err, job: name }, 'could not enqueue a repeatable job'),
      );
      arm(nextRunDelayMs(repeat));
    };
    const arm = (delayMs: number) => {
      if (this.closed) return;
      const timer = setTimeout(tick, delayMs);
      // Never keeps the process alive on its own.
      timer.unref();
      this.schedules.set(name, timer);
    };
    // As BullMQ does: an `everyMs` schedule runs once at once, a daily one at its next time.
    arm('everyMs' in repeat ? 0 : nextRunDelayMs(repeat));
  }

  async startWorkers(handlers: JobHandlers, options: StartWorkersOptions): Promise<void> {
    if (options.concurrency < 1) throw new Error('concurrency must be at least 1');
    if (options.jobs) this.registry = options.jobs;
    this.handlers = handlers;
    this.services = options.services;
    this.concurrency = options.concurrency;
    this.drain();
  }

  /** Resolves when nothing is running or ready (timers for later jobs may remain). Tests use it. */
  async idle(): Promise<void> {
    if (this.running === 0 && this.ready.length === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const timer of this.schedules.values()) clearTimeout(timer);
    this.schedules.clear();
    this.ready.length = 0;
    if (this.running > 0) await new Promise<void>((resolve) => this.backlog.push(resolve));
  }

  /**
   * Makes the job ready after `delayMs`. Node's timers take at most 2^31-1 ms (about 24.8 days) and
   * fire at once beyond it, while an email may be scheduled 30 days ahead: a longer wait is armed in
   * steps of the longest timer.
   */
  private later(job: PendingJob, delayMs: number): void {
    if (delayMs === 0) {
      this.push(job);
      return;
    }
    const step = Math.min(delayMs, MAX_TIMER_MS);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (delayMs > step) this.later(job, delayMs - step);
      else this.push(job);
    }, step);
    timer.unref();
    this.timers.add(timer);
  }

  private push(job: PendingJob): void {
    if (this.closed) return;
    this.ready.push(job);
    this.drain();
  }

  private drain(): void {
    if (!this.handlers) return;
    while (this.running < this.concurrency && this.ready.length > 0) {
      const job = this.ready.shift();
      if (!job) break;
      this.running++;
      void job
        .run(job.attempt)
        .then(
          () => this.release(job),
          (err: unknown) => this.fail(job, err),
        )
        .finally(() => {
          this.running--;
          if (this.running === 0) for (const resolve of this.backlog.splice(0)) resolve();
          if (this.running === 0 && this.ready.length === 0)
            for (const resolve of this.idleWaiters.splice(0)) resolve();
          this.drain();
        });
    }
  }

  /** A failed attempt: retried after the job's backoff while attempts remain, else dropped and logged. */
  private fail(job: PendingJob, err: unknown): void {
    const registered = this.findJob(job.name);
    if (registered && job.attempt < job.attempts && !this.closed) {
      this.logger.warn(
        { err, job: job.name, jobId: job.jobId, attempt: job.attempt },
        'job failed; will retry',
      );
      // The job id stays taken while the job waits for its retry.
      this.later({ ...job, attempt: job.attempt + 1 }, retryDelayMs(registered.backoff, job.attempt));
      return;
    }
    this.logger.error({ err, job: job.name, jobId: job.jobId, attempt: job.attempt }, 'job failed');
    this.release(job);
  }

  private release(job: PendingJob): void {
    if (job.jobId !== undefined) this.liveIds.delete(job.jobId);
  }

  private execute<N extends JobName>(name: N, payload: JobCatalog[N], run: JobRun): Promise<void> {
    const registered = this.findJob(name);
    if (registered) {
      const runner = registered.runner(this.handlers ?? {}, this.services);
      if (!runner) return Promise.reject(new Error(`No handler for job ${name}`));
      return runner(payload, run);
    }
    // A job no loaded module defines runs unchecked with its given handler.
    const handler = this.handlers?.[name];
    if (!handler) return Promise.reject(new Error(`No handler for job ${name}`));
    return handler(payload, run);
  }
}
