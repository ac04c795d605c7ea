// The background side of the server: the job workers (every job of workers/jobs.ts), the outbox
// relay loop, the sweeper of deliveries and outgoing mails, and the repeatable jobs (trash purge,
// forecast snapshot, overdue invoices).
// `crm serve` runs it in-process (unless told not to), `crm worker` as its own process. The
// sweeper re-enqueues deliveries that are due but have no job: after a restart of the in-process
// runner (its jobs live in memory) or of a Redis without persistence.
import { and, eq, lte, sql } from 'drizzle-orm';
import { type JobHandlers, requeueDue } from '../core/jobs.ts';
import type { Services } from '../core/services.ts';
import { webhookDeliveries } from '../tools/webhooks/tables.ts';
import { attemptDelivery, type DeliveryOptions } from './deliver.ts';
import './jobs.ts';
import { createDueFollowUps } from '../tools/email/follow-ups.ts';
import { relayBatch } from './relay.ts';
import { sweepDueEmails } from './send-email.ts';
import { sweepDueMails } from './send-mail.ts';
import { sweepDueEnrollments } from './workflow-steps.ts';

export interface BackgroundWorkOptions {
  relayIntervalMs?: number;
  sweepIntervalMs?: number;
  /**
   * How long past its due time a pending delivery must be before the sweeper re-enqueues it, so a
   * job that is merely queued behind others is not doubled.
   */
  sweepGraceMs?: number;
  concurrency?: number;
  /**
   * Handlers replacing some jobs' defined ones (tests pass recording ones); the real delivery
   * handler with `deliveryOptions` by default. Jobs not named here run their definitions.
   */
  handlers?: JobHandlers;
  /** Options of the real delivery handler (tests: their receiver's certificate). */
  deliveryOptions?: DeliveryOptions;
  /** How often the repeatable trash purge runs; TRASH_PURGE_INTERVAL_MS by default. */
  purgeIntervalMs?: number;
  /** Days trashed records are kept before the purge deletes them; TRASH_RETENTION_DAYS by default. */
  trashRetentionDays?: number;
}

export interface BackgroundWork {
  /**
   * Stops the relay and sweeper loops and waits for a pass in progress. The queue, with its
   * workers and the in-process schedules, closes with the services.
   */
  stop(): Promise<void>;
}

const SWEEP_BATCH = 500;

export function deliveryHandlers(services: Services, options: DeliveryOptions = {}): JobHandlers {
  return { 'webhook.deliver': (payload) => attemptDelivery(services, payload, options) };
}

/** Re-enqueues due pending deliveries; returns how many. */
export async function sweepPendingDeliveries(services: Services, graceMs: number): Promise<number> {
  const cutoff = new Date(Date.now() - graceMs);
  const due = await services.db.system
    .select({
      id: webhookDeliveries.id,
      attempts: sql<number>`jsonb_array_length(${webhookDeliveries.attempts})`,
    })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, 'pending'), lte(webhookDeliveries.nextAttemptAt, cutoff)))
    .orderBy(webhookDeliveries.nextAttemptAt)
    .limit(SWEEP_BATCH);
  await requeueDue(
    services.jobs,
    'webhook.deliver',
    // The id of the attempt this job makes, as the delivery handler names its retries.
    due.map((row) => ({ payload: { deliveryId: row.id }, jobId: `${row.id}:${Number(row.attempts) + 1}` })),
  );
  if (due.length > 0) services.logger.info({ count: due.length }, 'sweeper re-enqueued pending deliveries');
  return due.length;
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

export async function startBackgroundWork(
  services: Services,
  options: BackgroundWorkOptions = {},
): Promise<BackgroundWork> {
  const relayIntervalMs = options.relayIntervalMs ?? 250;
  const sweepIntervalMs = options.sweepIntervalMs ?? 5000;
  const sweepGraceMs = options.sweepGraceMs ?? 30_000;
  const concurrency = options.concurrency ?? services.config.workerConcurrency;
  const batchSize = 200;
  await services.jobs.startWorkers(options.handlers ?? deliveryHandlers(services, options.deliveryOptions), {
    concurrency,
    services,
  });
  const relay = loop('outbox relay', services, relayIntervalMs, async () => {
    // A full batch means more rows are waiting: relay them without waiting for the next tick.
    const { relayed } = await relayBatch(services, { batchSize });
    return relayed === batchSize;
  });
  const sweeper = loop('delivery sweeper', services, sweepIntervalMs, async () => {
    // Never rerun at once: re-enqueued rows stay pending until their job runs, so they would be found again.
    await sweepPendingDeliveries(services, sweepGraceMs);
    // The same for the mail outbox (workers/send-mail.ts): due rows whose 'mail.send' job was lost.
    await sweepDueMails(services, sweepGraceMs);
    // Scheduled email (workers/send-email.ts): due rows whose 'email.send' job was lost or whose
    // sender died holding the claim; then the follow-up tasks that came due (the row is the truth,
    // so a pass after a restart finds what the stopped one missed).
    await sweepDueEmails(services, sweepGraceMs);
    await createDueFollowUps(services);
    // And for workflow enrollments (workers/workflow-steps.ts): due steps of active workflows whose job was lost.
    await sweepDueEnrollments(services, sweepGraceMs);
    return false;
  });
  await services.jobs.schedule(
    'trash.purge',
    { retentionDays: options.trashRetentionDays ?? services.config.trashRetentionDays },
    { everyMs: options.purgeIntervalMs ?? services.config.trashPurgeIntervalMs },
  );
  await services.jobs.schedule('forecast.snapshot', {}, { dailyAtUtc: '00:05' });
  await services.jobs.schedule('estimates.expire', {}, { dailyAtUtc: '00:10' });
  await services.jobs.schedule('invoices.overdue', {}, { dailyAtUtc: '00:10' });
  await services.jobs.schedule('proposals.expire', {}, { dailyAtUtc: '00:15' });
  await services.jobs.schedule('mail.scrub', {}, { dailyAtUtc: '00:20' });
  await services.jobs.schedule('idempotency.expire', {}, { dailyAtUtc: '00:25' });
  return {
    async stop() {
      await Promise.all([relay.stop(), sweeper.stop()]);
    },
  };
}
