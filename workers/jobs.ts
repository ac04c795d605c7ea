// Every background job of the server, in one list: importing this module defines them all (core/jobs.ts),
// so any queue in the process can check and run each. A new job is a `defineJob` in its own module
// and one line here.
import { deliverWebhookJob } from './deliver.ts';
import { expireEstimatesJob } from './estimates.ts';
import { forecastSnapshotJob } from './forecast.ts';
import { expireIdempotencyKeysJob } from './idempotency.ts';
import { invoicesOverdueJob } from './invoices-overdue.ts';
import { expireProposalsJob } from './proposals.ts';
import { purgeTrashJob } from './purge.ts';
import { scrubMailJob } from './scrub-mail.ts';
import { sendEmailJob } from './send-email.ts';
import { sendMailJob } from './send-mail.ts';
import { workflowStepJob } from './workflow-steps.ts';

export const JOBS = [
  deliverWebhookJob,
  purgeTrashJob,
  forecastSnapshotJob,
  sendMailJob,
  invoicesOverdueJob,
  expireEstimatesJob,
  expireProposalsJob,
  scrubMailJob,
  sendEmailJob,
  workflowStepJob,
  expireIdempotencyKeysJob,
] as const;
