// The job queue on BullMQ, used when REDIS_URL is set: jobs survive a process restart and any node
// (crm serve's embedded workers or a separate `crm worker`) may run them. A job that was running
// on a killed worker is noticed as stalled once its lock expires and handed to another worker.
// Jobs are removed when they finish, so a job id blocks duplicates only while it waits, retries or
// runs. Retries use BullMQ's own attempts and backoff, from the job's definition (core/jobs.ts);
// repeatable jobs are BullMQ job schedulers, one per job name, shared by every node.
import { type Job, type JobsOptions, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type {
  EnqueueOptions,
  JobCatalog,
  JobHandlers,
  JobName,
  JobRegistry,
  Jobs,
  Repeat,
  StartWorkersOptions,
} from './jobs.ts';
import { checkRepeat, NO_JOBS, parseDailyAt } from './jobs.ts';
import type { Logger } from './logger.ts';

const QUEUE_NAME = 'crm-jobs';

export interface BullMqQueueOptions {
  logger: Logger;
  /** Redis key prefix (default "bull"); tests use a unique one per run. */
  prefix?: string;
  /**
   * How long a running job's lock lasts without renewal, i.e. how soon a job of a killed worker
   * is retried elsewhere; the stalled check runs at half this. Default 30 s (BullMQ's default).
   */
  stalledMs?: number;
  /**
   * The declared jobs (tools/index.ts `JOBS`): enqueue checks payloads and takes attempts and
   * backoff from them; `startWorkers` may hand another.
   */
  jobs?: JobRegistry;
}

/** BullMQ forbids ":" in custom ids; delivery ids are hex, so "_" cannot collide. */
function bullJobId(jobId: string): string {
  return jobId.replaceAll(':', '_');
}

/** Attempts and backoff from the job's definition; what every job of that name gets. */
function retryOptions(registry: JobRegistry, name: JobName): JobsOptions {
  const registered = registry.get(name);
  const backoff = registered?.backoff;
  return {
    attempts: registered?.attempts ?? 1,
    ...(backoff ? { backoff: { type: backoff.type, delay: backoff.delayMs } } : {}),
    // The rows the handlers write are the record of what happened; Redis keeps no history.
    removeOnComplete: true,
    removeOnFail: true,
  };
}

function jobOptions(registry: JobRegistry, name: JobName, options: EnqueueOptions): JobsOptions {
  return {
    ...retryOptions(registry, name),
    ...(options.jobId !== undefined ? { jobId: bullJobId(options.jobId) } : {}),
    delay: Math.max(0, options.delayMs ?? 0),
  };
}

/** BullMQ's repeat options for a schedule: `every`, or a daily cron pattern in UTC. */
function repeatOptions(repeat: Repeat): { every: number } | { pattern: string; tz: string } {
  if ('everyMs' in repeat) return { every: repeat.everyMs };
  const { hour, minute } = parseDailyAt(repeat.dailyAtUtc);
  return { pattern: `${minute} ${hour} * * *`, tz: 'UTC' };
}

export class BullMqQueue implements Jobs {
  readonly kind = 'bullmq' as const;
  private readonly connection: Redis;
  private readonly queue: Queue;
  private worker: Worker | undefined;
  private workerConnection: Redis | undefined;
  private readonly logger: Logger;
  private readonly prefix: string;
  private readonly stalledMs: number;
  private registry: JobRegistry;

  constructor(
    private readonly url: string,
    options: BullMqQueueOptions,
  ) {
    this.logger = options.logger;
    this.prefix = options.prefix ?? 'bull';
    this.stalledMs = options.stalledMs ?? 30_000;
    this.registry = options.jobs ?? NO_JOBS;
    // BullMQ needs maxRetriesPerRequest: null: its commands wait for Redis to come back instead of failing.
    this.connection = new Redis(url, { maxRetriesPerRequest: null });
    this.connection.on('error', (err) => this.logger.debug({ err: err.message }, 'job queue: Redis error'));
    this.queue = new Queue(QUEUE_NAME, { connection: this.connection, prefix: this.prefix });
    this.queue.on('error', (err) => this.logger.warn({ err: err.message }, 'job queue error'));
  }

  async enqueue<N extends JobName>(
    name: N,
    payload: JobCatalog[N],
    options: EnqueueOptions = {},
  ): Promise<void> {
    this.registry.get(name)?.check(payload);
    await this.queue.add(name, payload, jobOptions(this.registry, name, options));
  }

  async enqueueMany<N extends JobName>(
    name: N,
    jobs: ReadonlyArray<{ payload: JobCatalog[N]; options?: EnqueueOptions }>,
  ): Promise<void> {
    if (jobs.length === 0) return;
    const registered = this.registry.get(name);
    for (const job of jobs) registered?.check(job.payload);
    await this.queue.addBulk(
      jobs.map((job) => ({
        name,
        data: job.payload,
        opts: jobOptions(this.registry, name, job.options ?? {}),
      })),
    );
  }

  async schedule<N extends JobName>(name: N, payload: JobCatalog[N], repeat: Repeat): Promise<void> {
    checkRepeat(repeat);
    this.registry.get(name)?.check(payload);
    // Upserted under the job's name: every node calling this leaves one schedule, the latest.
    await this.queue.upsertJobScheduler(name, repeatOptions(repeat), {
      name,
      data: payload,
      opts: retryOptions(this.registry, name),
    });
  }

  async startWorkers(handlers: JobHandlers, options: StartWorkersOptions): Promise<void> {
    if (options.concurrency < 1) throw new Error('concurrency must be at least 1');
    if (this.worker) throw new Error('the workers are already running');
    if (options.jobs) this.registry = options.jobs;
    this.workerConnection = new Redis(this.url, { maxRetriesPerRequest: null });
    this.workerConnection.on('error', (err) =>
      this.logger.debug({ err: err.message }, 'job worker: Redis error'),
    );
    const { services } = options;
    const worker = new Worker(QUEUE_NAME, (job: Job) => this.execute(job, handlers, services), {
      connection: this.workerConnection,
      prefix: this.prefix,
      concurrency: options.concurrency,
      lockDuration: this.stalledMs,
      stalledInterval: Math.max(100, Math.floor(this.stalledMs / 2)),
      maxStalledCount: 2,
    });
    worker.on('failed', (job, err) =>
      this.logger.error({ err, job: job?.name, jobId: job?.id }, 'job failed'),
    );
    worker.on('error', (err) => this.logger.warn({ err: err.message }, 'job worker error'));
    this.worker = worker;
    await worker.waitUntilReady();
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.settleQueueStart();
    await this.queue.close();
    this.workerConnection?.disconnect();
    this.connection.disconnect();
  }

  /**
   * BullMQ starts a queue by asking Redis its version over the connection lent to it, and closing
   * the queue does not wait for that: disconnecting under it failed the INFO after the queue had
   * dropped its error listeners, which surfaced as an unhandled "Connection is closed". So the start
   * settles first. On a ready connection it finishes (bounded, for a Redis that stopped answering).
   * On one not ready it is still waiting for the connection and has sent nothing: ending the
   * connection ends it, while the queue still listens; between two reconnection attempts ioredis
   * never reports the end, so that wait is short.
   */
  private async settleQueueStart(): Promise<void> {
    const started = this.queue.waitUntilReady().then(
      () => true,
      () => true,
    );
    const ready = this.connection.status === 'ready';
    if (!ready) this.connection.disconnect();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ready ? 2000 : 200);
    });
    const settled = await Promise.race([started, bound]);
    clearTimeout(timer);
    if (!settled) this.connection.disconnect();
  }

  private async execute(
    job: Job,
    handlers: JobHandlers,
    services: StartWorkersOptions['services'],
  ): Promise<void> {
    // Data from Redis is untrusted until parsed: only defined jobs run here.
    const registered = this.registry.get(job.name);
    const runner = registered?.runner(handlers, services);
    if (!registered || !runner) throw new Error(`No handler for job ${job.name}`);
    await runner(job.data, {
      name: registered.name,
      jobId: job.id,
      // attemptsMade counts the attempts that already failed.
      attempt: job.attemptsMade + 1,
      attempts: job.opts.attempts ?? 1,
    });
  }
}

/**
 * BullMQ loses jobs when Redis evicts keys under memory pressure; the operator must configure
 * `maxmemory-policy noeviction`. Warns otherwise; a Redis that disables CONFIG cannot be checked.
 */
export async function checkRedisEviction(redis: Redis, logger: Logger): Promise<void> {
  let reply: unknown;
  try {
    reply = await redis.config('GET', 'maxmemory-policy');
  } catch (err) {
    logger.info(
      { err: err instanceof Error ? err.message : String(err) },
      'could not read Redis maxmemory-policy',
    );
    return;
  }
  const policy = Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined;
  if (policy === undefined) {
    logger.info('could not read Redis maxmemory-policy');
    return;
  }
  if (policy !== 'noeviction') {
    logger.warn(
      { maxmemoryPolicy: policy },
      'Redis maxmemory-policy is not noeviction: queued webhook jobs may be evicted (set maxmemory-policy noeviction)',
    );
  }
}
