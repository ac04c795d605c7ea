// The password reset's background work (index.ts `jobs`, `sweeps`, `schedules`): the job that turns
// one request into a token and a queued mail (or nothing), the sweep that wakes requests whose
// wake-up was lost, and the daily cleanup of old requests and expired tokens.
import { z } from 'zod';
import { dailyJob, defineJob, type Sweep } from '../../core/jobs.ts';
import { wakeMail } from '../../core/mail-outbox.ts';
import type { Services } from '../../core/services.ts';
import { cleanupResets, processRequest, unprocessedRequests, wakeRequest } from './store.ts';

const processPayload = z.object({ id: z.string().describe('The password_reset_requests row to process') });
const cleanupPayload = z.object({});

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** Process one password-reset request: a token and its mail for a live user, nothing otherwise. */
    'password_reset.process': z.output<typeof processPayload>;
    /** The daily removal of old reset requests and expired reset tokens. */
    'password_reset.cleanup': z.output<typeof cleanupPayload>;
  }
}

/**
 * One request, once (the row's claim is in the transaction that issues the token and queues the
 * mail, so a second run finds it processed). The mail's own job is woken after the commit; the
 * outbox's sweeper covers a lost one. Retried twice on a failure (the transaction rolled back).
 */
export async function runResetRequest(services: Services, id: string, now = new Date()) {
  const processed = await processRequest(services, id, now);
  if (processed?.mailId !== undefined) await wakeMail(services, processed.mailId);
  return processed;
}

export const processResetJob = defineJob({
  name: 'password_reset.process',
  payload: processPayload,
  attempts: 3,
  backoff: { type: 'exponential', delayMs: 2000 },
  handler: async ({ id }, { services }) => {
    await runResetRequest(services, id);
  },
});

/** Wakes requests still unprocessed past the grace: a fresh job id, since the first one may be kept as failed. */
export const resetRequestSweep: Sweep = {
  name: 'password reset requests',
  async run(services, graceMs) {
    const now = new Date();
    const due = await unprocessedRequests(services, graceMs, now);
    for (const { id } of due) await wakeRequest(services, id, `${id}:swept:${now.getTime()}`);
    return due.length;
  },
};

export const resetCleanup = dailyJob({
  name: 'password_reset.cleanup',
  payload: cleanupPayload,
  daily: {},
  atUtc: '03:40',
  run: (services, _payload, now) => cleanupResets(services, now),
  log: { message: 'old password reset requests and tokens removed', field: 'removed', onlyWhenAny: true },
});
