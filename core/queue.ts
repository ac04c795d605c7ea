// The webhook delivery's view of the job port (core/jobs.ts). The relay, the delivery handler and
// the webhook tools enqueue through `services.queue`, typed to the delivery job alone, so a test can
// stand a recording queue in for it; everything else uses `services.jobs` (the same queue).
import type { EnqueueOptions, JobCatalog, JobHandlers, StartWorkersOptions } from './jobs.ts';

export type { EnqueueOptions, JobHandlers };

export type JobPayloads = Pick<JobCatalog, 'webhook.deliver'>;

declare module './services.ts' {
  interface Services {
    /** The same queue as `jobs`, typed to webhook delivery alone. */
    queue: JobQueue;
  }
}

export interface JobQueue {
  readonly kind: 'in-process' | 'bullmq';
  enqueue<N extends keyof JobPayloads>(
    name: N,
    payload: JobPayloads[N],
    options?: EnqueueOptions,
  ): Promise<void>;
  enqueueMany<N extends keyof JobPayloads>(
    name: N,
    jobs: ReadonlyArray<{ payload: JobPayloads[N]; options?: EnqueueOptions }>,
  ): Promise<void>;
  startWorkers(handlers: JobHandlers, options: StartWorkersOptions): Promise<void>;
  close(): Promise<void>;
}
