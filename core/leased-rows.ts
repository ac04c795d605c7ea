// The leased-row kit: what every sender of a durable row shares (the mail outbox, core/mail-send.ts;
// scheduled email, tools/email/sender.ts; workflow steps, tools/workflows/steps-runner.ts). The row
// is the truth and the job a wake-up (core/jobs.ts), so each sender:
//
// 1. claims the row in one UPDATE (claimRow): waiting (or claimed with an expired lease), due (`due` <= now: scheduled
//    time, next retry, or an expired lease), attempts left; it adds 1 to `attempts` and moves `due`
//    to the end of a lease. Of two jobs for one row only one claims it.
// 2. writes its outcome only while the claim holds (writeIfClaimed, the fence: the claimed status and
//    the same attempt number), so a sender whose lease expired cannot overwrite the one that took over;
// 3. on a failure, waits the policy's delay for that attempt (retryLater) and wakes the row again
//    (enqueueNextAttempt: the job id names the row and attempt), or ends it once no attempt is left;
// 4. ends the claims whose lease expired after the last attempt, "outcome unknown" (endAbandoned);
// 5. has a sweep that wakes rows due by more than a grace whose job was lost (sweepDueRows).
//
// What stays in each sender is its own rules: what a row is, how it is sent, and what a success or a
// failure writes. The sender names its table's lease columns once (leasedTable); the kit's writes
// take the sender's own typed `set` and add the lease columns to it.
import { and, eq, getTableColumns, inArray, is, lte, type SQL, sql } from 'drizzle-orm';
import { PgColumn, type PgTable, type PgUpdateSetSource } from 'drizzle-orm/pg-core';
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

/**
 * The senders' one policy: three attempts in all, 1 then 5 minutes apart, and a claim that holds
 * 5 minutes (an SMTP session or a step's transaction ends well within it).
 */
export const SENDER_LEASE: LeasePolicy = {
  maxAttempts: 3,
  retryDelaysMs: [60_000, 300_000],
  leaseMs: 5 * 60_000,
};

/** The columns of a leased row. */
export interface LeaseColumns {
  id: PgColumn;
  status: PgColumn;
  attempts: PgColumn;
  /** When the row is next due: its scheduled time, its next retry, or the end of its claim's lease. */
  due: PgColumn;
}

type LeaseRole = keyof LeaseColumns;

/** A sender's leased table: the table, its lease columns (and their property names), its statuses and policy. */
export interface LeasedTable<T extends PgTable> {
  table: T;
  columns: LeaseColumns;
  /** The table's property names of the lease columns, for the writes' `set`. */
  keys: Record<LeaseRole, string>;
  /** The status a row waits in for its attempt: scheduled, or back after a failed attempt (`queued`). */
  waitingStatus: string;
  /** The status a claimed row holds while its attempt runs (`sending`; a workflow step's `active`). */
  claimedStatus: string;
  /** The statuses a claim takes a row from and a sweep wakes it in: waiting, or claimed with a lease that may expire. */
  dueStatuses: readonly string[];
  policy: LeasePolicy;
}

/**
 * A sender's leased table. Its rows have the columns `id` (text), `status` and `attempts` (an
 * integer) under those property names, and a due time under `lease.due` (e.g. `nextAttemptAt`); a
 * row waits for an attempt in status `lease.waiting` and a claim holds it in `lease.claimed`; the
 * policy is SENDER_LEASE unless `lease.policy`.
 * Throws when one is not a column of the table, so a misnamed sender fails as its module loads,
 * not at its first claim.
 */
export function leasedTable<T extends PgTable>(
  table: T,
  lease: { due: keyof T['_']['columns'] & string; waiting: string; claimed: string; policy?: LeasePolicy },
): LeasedTable<T> {
  const keys: Record<LeaseRole, string> = {
    id: 'id',
    status: 'status',
    attempts: 'attempts',
    due: lease.due,
  };
  const all: Record<string, unknown> = getTableColumns(table);
  const column = (role: LeaseRole): PgColumn => {
    const found = all[keys[role]];
    if (!is(found, PgColumn)) throw new Error(`leased table: ${keys[role]} is not a column`);
    return found;
  };
  return {
    table,
    columns: { id: column('id'), status: column('status'), attempts: column('attempts'), due: column('due') },
    keys,
    waitingStatus: lease.waiting,
    claimedStatus: lease.claimed,
    dueStatuses: [...new Set([lease.waiting, lease.claimed])],
    policy: lease.policy ?? SENDER_LEASE,
  };
}

/** The wait after failed attempt `attempt` (1-based). */
function retryDelayMs(policy: LeasePolicy, attempt: number): number {
  return policy.retryDelaysMs[Math.min(attempt, policy.retryDelaysMs.length) - 1] ?? 60_000;
}

/** The end of a claim's lease taken at `now`. */
function leaseEnd(policy: LeasePolicy, now: Date): Date {
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
function claimable(
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
function abandoned(
  columns: LeaseColumns,
  policy: LeasePolicy,
  options: { id?: string | undefined; status: string; now: Date },
): SQL | undefined {
  return and(
    rowOrAll(columns, options.id),
    eq(columns.status, options.status),
    lte(columns.due, options.now),
    sql`${columns.attempts} >= ${policy.maxAttempts}`,
  );
}

/** A row as a claim or a wake-up names it: the row and the attempt it made last (0 before the first). */
export interface RowAttempt {
  id: string;
  attempts: number;
}

/** What a claim is known by: the row, the status it holds it in, and its attempt number. */
export interface Claim {
  id: string;
  status: string;
  attempts: number;
}

/** The claim `row`'s attempt holds on a row of `leased`. */
export function claimOf(leased: LeasedTable<PgTable>, row: RowAttempt): Claim {
  return { id: row.id, status: leased.claimedStatus, attempts: row.attempts };
}

/** The fence: the row is still held by the claim of attempt `attempt` (status `status`). */
export function stillClaimed(columns: LeaseColumns, claim: Claim): SQL | undefined {
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

/** The row type of a leased table. */
type RowOf<T extends PgTable> = T['$inferSelect'];

/** What the kit's UPDATEs write: the sender's `set`, typed by its own table, and lease columns by role. */
type LeaseWrite<T extends PgTable> = {
  set: PgUpdateSetSource<T>;
  lease: Partial<Record<LeaseRole, unknown>>;
  where: SQL | undefined;
};

/**
 * One UPDATE of `leased`'s rows matching `write.where`. The one place the kit writes: the lease
 * columns it adds to the sender's `set` are named by `keys`, hence the cast of the merged set.
 */
function updateLeased<T extends PgTable>(db: Executor, leased: LeasedTable<T>, write: LeaseWrite<T>) {
  const values: Record<string, unknown> = { ...write.set };
  for (const [role, value] of Object.entries(write.lease)) values[leased.keys[role as LeaseRole]] = value;
  return db
    .update(leased.table)
    .set(values as PgUpdateSetSource<T>)
    .where(write.where);
}

/** The UPDATE, returning the rows (drizzle cannot follow a generic table through `returning()`: a cast). */
async function updateRows<T extends PgTable>(
  db: Executor,
  leased: LeasedTable<T>,
  write: LeaseWrite<T>,
): Promise<RowOf<T>[]> {
  const rows: unknown = await updateLeased(db, leased, write).returning();
  return rows as RowOf<T>[];
}

/** The UPDATE, returning how many rows it changed (reading back only their ids: a row may be large). */
async function countUpdated<T extends PgTable>(
  db: Executor,
  leased: LeasedTable<T>,
  write: LeaseWrite<T>,
): Promise<number> {
  const rows: unknown[] = await updateLeased(db, leased, write).returning({ id: leased.columns.id });
  return rows.length;
}

/**
 * Claims row `id` for one attempt if it is waiting (or claimed by a sender whose lease expired), due
 * at `now` and has an attempt left (and matches `also`): `set`, the claimed status, 1 more attempt
 * and `due` at the end of the lease. Returns the claimed row, or null when it is not due (sent,
 * failed, claimed by another, not yet time).
 */
export async function claimRow<T extends PgTable>(
  db: Executor,
  leased: LeasedTable<T>,
  options: { id: string; now: Date; also?: SQL | undefined },
  set: PgUpdateSetSource<T>,
): Promise<RowOf<T> | null> {
  const { columns, policy } = leased;
  const [row] = await updateRows(db, leased, {
    set,
    lease: {
      status: leased.claimedStatus,
      attempts: sql`${columns.attempts} + 1`,
      due: leaseEnd(policy, options.now),
    },
    where: and(claimable(columns, policy, { ...options, statuses: leased.dueStatuses }), options.also),
  });
  return row ?? null;
}

/**
 * Writes `set` only while the claim of `claimed`'s attempt holds (and `also` matches); the row, or
 * null when the claim was taken over.
 */
export async function writeIfClaimed<T extends PgTable>(
  db: Executor,
  leased: LeasedTable<T>,
  claimed: RowAttempt,
  set: PgUpdateSetSource<T>,
  also?: SQL,
): Promise<RowOf<T> | null> {
  const held = stillClaimed(leased.columns, claimOf(leased, claimed));
  const [row] = await updateRows(db, leased, { set, lease: {}, where: and(held, also) });
  return row ?? null;
}

/**
 * writeIfClaimed for a sender that needs no row back: true when the claim held and `set` was
 * written (only the id is read back, not a row that may carry large content).
 */
export async function recordIfClaimed<T extends PgTable>(
  db: Executor,
  leased: LeasedTable<T>,
  claimed: RowAttempt,
  set: PgUpdateSetSource<T>,
): Promise<boolean> {
  const held = stillClaimed(leased.columns, claimOf(leased, claimed));
  return (await countUpdated(db, leased, { set, lease: {}, where: held })) > 0;
}

/**
 * Puts `claimed`'s failed attempt back to wait the policy's delay: `set` (the reason) with the
 * waiting status and `due` at now plus the delay, only while the claim holds. The sender wakes the
 * row with the delay when the row came back (enqueueNextAttempt).
 */
export async function retryLater<T extends PgTable>(
  db: Executor,
  leased: LeasedTable<T>,
  claimed: RowAttempt,
  now: Date,
  set: PgUpdateSetSource<T>,
  also?: SQL,
): Promise<{ delayMs: number; row: RowOf<T> | null }> {
  const delayMs = retryDelayMs(leased.policy, claimed.attempts);
  const held = stillClaimed(leased.columns, claimOf(leased, claimed));
  const lease = { status: leased.waitingStatus, due: new Date(now.getTime() + delayMs) };
  const [row] = await updateRows(db, leased, { set, lease, where: and(held, also) });
  return { delayMs, row: row ?? null };
}

/**
 * The condition of the claims whose lease expired after the last attempt (row `id`, or all with
 * no id) at `now`: nobody knows how far the attempt got, and none is left.
 */
export function abandonedClaims(
  leased: LeasedTable<PgTable>,
  now: Date,
  id: string | undefined,
): SQL | undefined {
  return abandoned(leased.columns, leased.policy, { id, status: leased.claimedStatus, now });
}

/** Ends the abandoned claims (abandonedClaims) with `set` and no due time; returns how many. */
export async function endAbandoned<T extends PgTable>(
  db: Executor,
  leased: LeasedTable<T>,
  options: { id?: string | undefined; now: Date },
  set: PgUpdateSetSource<T>,
): Promise<number> {
  const where = abandonedClaims(leased, options.now, options.id);
  return countUpdated(db, leased, { set, lease: { due: null }, where });
}

/** How a sender's rows are woken: the job that makes an attempt, and that job for a row. */
export interface RowWakeUp<N extends JobName> {
  job: N;
  /** The payload of the row's next attempt, and a job id naming the row and that attempt. */
  jobOf(row: RowAttempt): DueJob<N>;
}

/**
 * Wakes `row`'s next attempt after `delayMs`. A failed enqueue is logged with `log.fields` and
 * `log.message`, not thrown: the row waits with its due time, and the sweeper wakes it.
 */
export async function enqueueNextAttempt<N extends JobName>(
  services: Services,
  wakeUp: RowWakeUp<N>,
  row: RowAttempt,
  delayMs: number,
  log: { fields: Record<string, unknown>; message: string },
): Promise<void> {
  const { payload, jobId } = wakeUp.jobOf(row);
  try {
    await services.jobs.enqueue(wakeUp.job, payload, { delayMs, jobId });
  } catch (err) {
    services.logger.warn({ ...log.fields, err }, log.message);
  }
}

/** Rows a sweep reads at most per pass. */
export const SWEEP_BATCH = 500;

/** The sweep's cutoff: rows due before it are due by more than `graceMs`, so their job was lost. */
export function sweepCutoff(now: Date, graceMs: number): Date {
  return new Date(now.getTime() - graceMs);
}

/**
 * What a sweep wakes: the rows of `table` in one of `statuses` due before `cutoff` (and matching
 * `also`), the longest due first, at most SWEEP_BATCH, with the attempt their job id names.
 */
async function dueRows(
  db: Executor,
  table: PgTable,
  columns: LeaseColumns,
  statuses: readonly string[],
  cutoff: Date,
  also?: SQL,
): Promise<RowAttempt[]> {
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

/**
 * A sender's sweep pass over `leased`: the rows waiting or claimed, due by more than `graceMs` at
 * `now`, woken by `wakeUp` and logged as `sweep.what`. Returns how many.
 */
export async function sweepDueRows<T extends PgTable, N extends JobName>(
  services: Services,
  leased: LeasedTable<T>,
  wakeUp: RowWakeUp<N>,
  sweep: { what: string; graceMs: number; now: Date },
): Promise<number> {
  const cutoff = sweepCutoff(sweep.now, sweep.graceMs);
  const due = await dueRows(services.db.system, leased.table, leased.columns, leased.dueStatuses, cutoff);
  return wakeDue(services, wakeUp.job, due.map(wakeUp.jobOf), sweep.what);
}
