// The embedded default's job runner: timers in this process, at most `concurrency` jobs at once,
// de-duplication by job id while a job waits or runs. Jobs do not survive a restart here; the
// handlers' durable state (the delivery log) does, and workers/ re-enqueue what is still pending.
import type { Logger } from './logger.ts';
import type { EnqueueOptions, JobHandlers, JobName, JobPayloads, JobQueue } from './queue.ts';

interface PendingJob {
  run: () => Promise<void>;
  jobId: string | undefined;
}

export class InProcessQueue implements JobQueue {
  readonly kind = 'in-process' as const;
  private handlers: JobHandlers | undefined;
  private concurrency = 1;
  private running = 0;
  private closed = false;
  private readonly ready: PendingJob[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly liveIds = new Set<string>();
  private readonly backlog: Array<() => void> = [];
  private readonly idleWaiters: Array<() => void> = [];

  constructor(private readonly logger: Logger) {}

  async enqueue<N extends JobName>(
    name: N,
    payload: JobPayloads[N],
    options: EnqueueOptions = {},
  ): Promise<void> {
    if (this.closed) throw new Error('The job queue is closed');
    const { jobId } = options;
    if (jobId !== undefined) {
      if (this.liveIds.has(jobId)) return;
      this.liveIds.add(jobId);
    }
    const job: PendingJob = { jobId, run: () => this.execute(name, payload) };
    const delay = Math.max(0, options.delayMs ?? 0);
    if (delay === 0) {
      this.push(job);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.push(job);
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  async enqueueMany<N extends JobName>(
    name: N,
    jobs: ReadonlyArray<{ payload: JobPayloads[N]; options?: EnqueueOptions }>,
  ): Promise<void> {
    for (const job of jobs) await this.enqueue(name, job.payload, job.options);
  }

  async startWorkers(handlers: JobHandlers, options: { concurrency: number }): Promise<void> {
    if (options.concurrency < 1) throw new Error('concurrency must be at least 1');
    this.handlers = handlers;
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
    this.ready.length = 0;
    if (this.running > 0) await new Promise<void>((resolve) => this.backlog.push(resolve));
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
        .run()
        .catch((err: unknown) => this.logger.error({ err }, 'job failed'))
        .finally(() => {
          this.running--;
          if (job.jobId !== undefined) this.liveIds.delete(job.jobId);
          if (this.running === 0) for (const resolve of this.backlog.splice(0)) resolve();
          if (this.running === 0 && this.ready.length === 0)
            for (const resolve of this.idleWaiters.splice(0)) resolve();
          this.drain();
        });
    }
  }

  private execute<N extends JobName>(name: N, payload: JobPayloads[N]): Promise<void> {
    const handler = this.handlers?.[name];
    if (!handler) return Promise.reject(new Error(`No handler for job ${name}`));
    return handler(payload);
  }
}
