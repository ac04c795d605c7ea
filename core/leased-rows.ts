// The leased-row kit: what every sender of a durable row shares (the mail outbox, core/mail-send.ts;
// scheduled email, tools/email/sender.ts; workflow steps, tools/workflows/steps-runner.ts). The row
// is the truth and the job a wake-up (core/jobs.ts), so each sender:
//
// 1. claims the row in one UPDATE: in a claimable status, due (`due` <= now: scheduled time, next
//    retry, or an expired lease), attempts left; it adds 1 to `attempts` and moves `due` to the end
//    of a lease. Of two jobs for one row only one claims it.
// 2. writes its outcome only while the claim holds (the fence: the claimed status and the same
//    attempt number), so a sender whose lease expired cannot overwrite the one that took over;
// 3. on a failure, waits the policy's delay for that attempt and wakes the row again (the job id
//    names the row and attempt), or ends it once no attempt is left;
// 4. ends the claims whose lease expired after the last attempt ("outcome unknown");
// 5. has a sweep that wakes rows due by more than a grace whose job was lost.
//
// The queries stay typed in each sender (drizzle's update types need the concrete table); this kit
// gives them the conditions, the delays and the sweep's wake-up, so the rule is written once.
import { and, eq, inArray, lte, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from './db/client.ts';
import { type DueJob, type JobName, requeueDue } from './jobs.ts';
import type { Services } from './services.ts';

/** How a sender leases its rows. */
export interface LeasePolicy {
  /** Attempts in all before the row ends failed. */
  maxAttempts: number;
  /** The wait after failed attempt n (1-based); the last one repeats. */
  retryDelaysMs: readonly number[];
  /** How long a claim holds: a sender that has not recorded an outcome by then is presumed dead. */
  leaseMs: number;
}

/** The columns of a leased row. */
export interface LeaseColumns {
  id: PgColumn;
  status: PgColumn;
  attempts: PgColumn;
  /** When the row is next due: its scheduled time, its next retry, or the end of its claim's lease. */
  due: PgColumn;
}

/** The wait after failed attempt `attempt` (1-based). */
export function retryDelayMs(policy: LeasePolicy, attempt: number): number {
  return policy.retryDelaysMs[Math.min(attempt, policy.retryDelaysMs.length) - 1] ?? 60_000;
}

/** The end of a claim's lease taken at `now`. */
export function leaseEnd(policy: LeasePolicy, now: Date): Date {
  return new Date(now.getTime() + policy.leaseMs);
}

/** What a row keeps of an error: its message, bounded. */
export function failureReason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.slice(0, 1000) || 'unknown error';
}

/** Row `id` only, or every row when `id` is undefined. */
function rowOrAll(columns: LeaseColumns, id: string | undefined): SQL | undefined {
  return id === undefined ? undefined : eq(columns.id, id);
}

/** The claim's condition: the row in one of `statuses`, due at `now`, with an attempt left. */
export function claimable(
  columns: LeaseColumns,
  policy: LeasePolicy,
  options: { id: string; statuses: readonly string[]; now: Date },
): SQL | undefined {
  return and(
    eq(columns.id, options.id),
    inArray(columns.status, [...options.statuses]),
    lte(columns.due, options.now),
    sql`${columns.attempts} < ${policy.maxAttempts}`,
  );
}

/** Claims in `status` whose lease expired after the last attempt (one row, or all with no id). */
export function abandoned(
  columns: LeaseColumns,
  policy: LeasePolicy,
  options: { id?: string; status: string; now: Date },
): SQL | undefined {
  return and(
    rowOrAll(columns, options.id),
    eq(columns.status, options.status),
    lte(columns.due, options.now),
    sql`${columns.attempts} >= ${policy.maxAttempts}`,
  );
}

/** The fence: the row is still held by the claim of attempt `attempt` (status `status`). */
export function stillClaimed(
  columns: LeaseColumns,
  claim: { id: string; status: string; attempts: number },
): SQL | undefined {
  return and(
    eq(columns.id, claim.id),
    eq(columns.status, claim.status),
    eq(columns.attempts, claim.attempts),
  );
}

/** The sweep's condition: rows in one of `statuses` due before `cutoff` (now less the grace). */
export function dueBefore(columns: LeaseColumns, statuses: readonly string[], cutoff: Date): SQL | undefined {
  return and(inArray(columns.status, [...statuses]), lte(columns.due, cutoff));
}

/** Rows a sweep reads at most per pass. */
export const SWEEP_BATCH = 500;

/**
 * What a sweep wakes: the rows of `table` in one of `statuses` due before `cutoff` (and matching
 * `also`), the longest due first, at most SWEEP_BATCH, with the attempt their job id names.
 */
export async function dueRows(
  db: Executor,
  table: PgTable,
  columns: LeaseColumns,
  statuses: readonly string[],
  cutoff: Date,
  also?: SQL,
): Promise<{ id: string; attempts: number }[]> {
  const rows = await db
    .select({ id: columns.id, attempts: columns.attempts })
    .from(table)
    .where(and(dueBefore(columns, statuses, cutoff), also))
    .orderBy(columns.due)
    .limit(SWEEP_BATCH);
  // The kit's columns are untyped (any sender's table): the id is text, attempts an integer.
  return rows.map((row) => ({ id: String(row.id), attempts: Number(row.attempts) }));
}

/** The sweep's wake-up: re-enqueues the due rows' jobs (ids naming row and attempt) and logs how many. */
export async function wakeDue<N extends JobName>(
  services: Services,
  job: N,
  due: ReadonlyArray<DueJob<N>>,
  what: string,
): Promise<number> {
  await requeueDue(services.jobs, job, due);
  if (due.length > 0) services.logger.info({ count: due.length }, `sweeper re-enqueued ${what}`);
  return due.length;
}
