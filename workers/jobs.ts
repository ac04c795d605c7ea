// Every background job of the server, in one list: importing this module defines them all (core/jobs.ts),
// so any queue in the process can check and run each. A new job is a `defineJob` in its own module
// and one line here.
import type { JobName } from '../core/jobs.ts';
import { deliverWebhookJob } from './deliver.ts';
import { purgeTrashJob } from './purge.ts';

export const JOBS = [deliverWebhookJob, purgeTrashJob] as const;

/** The names of every listed job (tests check that no declared payload lacks a definition). */
export const JOB_NAMES: readonly JobName[] = JOBS.map((job) => job.name);
