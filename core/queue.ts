// The job queue port. Tools enqueue work after their transaction commits; a runner executes it:
// an in-process runner on the embedded default, BullMQ when REDIS_URL is set (workers/). Both run
// the same handlers with the same retry schedule, so behaviour does not depend on the deployment.

/** Every job kind and its payload. */
export interface JobPayloads {
  /**
   * Make the next attempt of one webhook delivery (workers/deliver.ts). `single`: exactly one
   * attempt and no retries (the test endpoint and replays).
   */
  'webhook.deliver': { deliveryId: string; single?: boolean };
}
export type JobName = keyof JobPayloads;

export interface EnqueueOptions {
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number;
  /**
   * Deduplication key: while a job with this id is waiting or running, enqueueing it again does
   * nothing. Delivery attempts use `<deliveryId>` for the first and `<deliveryId>:<n>` after.
   */
  jobId?: string;
}

export type JobHandlers = { [N in JobName]: (payload: JobPayloads[N]) => Promise<void> };

export interface JobQueue {
  readonly kind: 'in-process' | 'bullmq';
  enqueue<N extends JobName>(name: N, payload: JobPayloads[N], options?: EnqueueOptions): Promise<void>;
  /** Adds many jobs of one kind at once (one Redis round trip with BullMQ), e.g. a relay batch. */
  enqueueMany<N extends JobName>(
    name: N,
    jobs: ReadonlyArray<{ payload: JobPayloads[N]; options?: EnqueueOptions }>,
  ): Promise<void>;
  /** Starts executing jobs with these handlers (crm serve's embedded workers, or crm worker). */
  startWorkers(handlers: JobHandlers, options: { concurrency: number }): Promise<void>;
  /** Stops taking jobs, waits for running ones, releases connections. */
  close(): Promise<void>;
}
