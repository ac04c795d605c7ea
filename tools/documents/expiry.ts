// Expiry shared by estimates and proposals: a document valid until a calendar day (UTC) expires the
// day after. The daily jobs move every open one past its day to `expired` in one statement; a send
// or an answer refuses a document already past its day before the job has run.
import { and, eq, inArray, isNull, lt, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../../core/db/client.ts';
import type { StateMachine } from '../../core/state-machine.ts';

/** A UTC calendar day, YYYY-MM-DD. */
function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** True when `validUntil` is a day before `now`'s UTC day. */
export function isPastValidity(validUntil: string | null, now: Date): boolean {
  return validUntil !== null && validUntil < utcDay(now);
}

/** The states the expiry moves from: those the machine lets move to `expired`. */
export function expiringStates<S extends string>(machine: StateMachine<S>, expired: S): S[] {
  return machine.states.filter((s) => machine.allowedFrom(s).includes(expired));
}

/** The columns of a document table the expiry reads. */
interface ExpiryColumns {
  orgId: PgColumn;
  status: PgColumn;
  validUntil: PgColumn;
  deletedAt: PgColumn;
}

/** Live documents in `states` whose validity ended before `now`'s UTC day, in every organization or `orgId`. */
function dueForExpiry(
  columns: ExpiryColumns,
  states: readonly string[],
  now: Date,
  orgId?: string,
): SQL | undefined {
  return and(
    inArray(columns.status, [...states]),
    lt(columns.validUntil, utcDay(now)),
    isNull(columns.deletedAt),
    orgId === undefined ? undefined : eq(columns.orgId, orgId),
  );
}

/** What an expiry writes. */
function expiredAt(now: Date): { status: 'expired'; expiredAt: Date; updatedAt: Date } {
  return { status: 'expired', expiredAt: now, updatedAt: now };
}

/**
 * The daily expiry of a document table: every live document in `states` (expiringStates) whose validity ended before `now`'s UTC day becomes expired, in every organization or
 * only `orgId`, in one statement (a rerun finds nothing left). Returns the ids it expired.
 */
export async function expireDocuments(
  db: Executor,
  table: PgTable & ExpiryColumns & { id: PgColumn },
  states: readonly string[],
  now: Date,
  orgId?: string,
): Promise<string[]> {
  const rows = await db
    .update(table)
    .set(expiredAt(now))
    .where(dueForExpiry(table, states, now, orgId))
    // Typed through sql<string>: the kit knows the id column only as some table's column.
    .returning({ id: sql<string>`${table.id}` });
  return rows.map((r) => r.id);
}
