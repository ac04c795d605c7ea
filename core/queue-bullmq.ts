// The job queue on BullMQ, used when REDIS_URL is set: jobs survive a process restart and any node
// (crm serve's embedded workers or a separate `crm worker`) may run them. A job that was running
// on a killed worker is noticed as stalled once its lock expires and handed to another worker.
// Jobs are removed when they finish, so a job id blocks duplicates only while it waits or runs.
import { type Job, type JobsOptions, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import type { Logger } from './logger.ts';
import type { EnqueueOptions, JobHandlers, JobName, JobPayloads, JobQueue } from './queue.ts';

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
}

const deliverPayload = z.object({
  deliveryId: z.string().describe('The delivery to attempt'),
  single: z.boolean().optional().describe('One attempt, no retries'),
});

/** BullMQ forbids ":" in custom ids; delivery ids are hex, so "_" cannot collide. */
export function bullJobId(jobId: string): string {
  return jobId.replaceAll(':', '_');
}

function jobOptions(options: EnqueueOptions): JobsOptions {
  return {
    ...(options.jobId !== undefined ? { jobId: bullJobId(options.jobId) } : {}),
    delay: Math.max(0, options.delayMs ?? 0),
    // Retries are the handlers' business (they enqueue the next attempt with its own id).
    attempts: 1,
    removeOnComplete: true,
    removeOnFail: true,
  };
}

export class BullMqQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  private readonly connection: Redis;
  private readonly queue: Queue;
  private worker: Worker | undefined;
  private workerConnection: Redis | undefined;
  private readonly logger: Logger;
  private readonly prefix: string;
  private readonly stalledMs: number;

  constructor(
    private readonly url: string,
    options: BullMqQueueOptions,
  ) {
    this.logger = options.logger;
    this.prefix = options.prefix ?? 'bull';
    this.stalledMs = options.stalledMs ?? 30_000;
    // BullMQ needs maxRetriesPerRequest: null: its commands wait for Redis to come back instead of failing.
    this.connection = new Redis(url, { maxRetriesPerRequest: null });
    this.connection.on('error', (err) => this.logger.debug({ err: err.message }, 'job queue: Redis error'));
    this.queue = new Queue(QUEUE_NAME, { connection: this.connection, prefix: this.prefix });
    this.queue.on('error', (err) => this.logger.warn({ err: err.message }, 'job queue error'));
  }

  async enqueue<N extends JobName>(
    name: N,
    payload: JobPayloads[N],
    options: EnqueueOptions = {},
  ): Promise<void> {
    await this.queue.add(name, payload, jobOptions(options));
  }

  async enqueueMany<N extends JobName>(
    name: N,
    jobs: ReadonlyArray<{ payload: JobPayloads[N]; options?: EnqueueOptions }>,
  ): Promise<void> {
    if (jobs.length === 0) return;
    await this.queue.addBulk(
      jobs.map((job) => ({ name, data: job.payload, opts: jobOptions(job.options ?? {}) })),
    );
  }

  async startWorkers(handlers: JobHandlers, options: { concurrency: number }): Promise<void> {
    if (options.concurrency < 1) throw new Error('concurrency must be at least 1');
    if (this.worker) throw new Error('the workers are already running');
    this.workerConnection = new Redis(this.url, { maxRetriesPerRequest: null });
    this.workerConnection.on('error', (err) =>
      this.logger.debug({ err: err.message }, 'job worker: Redis error'),
    );
    const worker = new Worker(QUEUE_NAME, (job: Job) => this.execute(handlers, job), {
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
    await this.queue.close();
    this.workerConnection?.disconnect();
    this.connection.disconnect();
  }

  private async execute(handlers: JobHandlers, job: Job): Promise<void> {
    if (job.name !== 'webhook.deliver') throw new Error(`No handler for job ${job.name}`);
    await handlers['webhook.deliver'](deliverPayload.parse(job.data));
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
