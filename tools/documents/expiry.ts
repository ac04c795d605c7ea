// Expiry shared by estimates and proposals: a document valid until a calendar day (UTC) expires the
// day after. The daily jobs move every open one past its day to `expired` in one statement; a send
// or an answer refuses a document already past its day before the job has run.
import { and, eq, inArray, isNull, lt, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
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
export interface ExpiryColumns {
  orgId: PgColumn;
  status: PgColumn;
  validUntil: PgColumn;
  deletedAt: PgColumn;
}

/** Live documents in `states` whose validity ended before `now`'s UTC day, in every organization or `orgId`. */
export function dueForExpiry(
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
export function expiredAt(now: Date): { status: 'expired'; expiredAt: Date; updatedAt: Date } {
  return { status: 'expired', expiredAt: now, updatedAt: now };
}
