// Recognises PostgreSQL errors through drizzle's wrapper (the driver error is the `cause`).
function pgCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    if (
      typeof e === 'object' &&
      e !== null &&
      'code' in e &&
      typeof e.code === 'string' &&
      /^[0-9A-Z]{5}$/.test(e.code)
    ) {
      return e.code;
    }
    e = typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined;
  }
  return undefined;
}

export function isUniqueViolation(err: unknown): boolean {
  return pgCode(err) === '23505';
}

/**
 * SQLSTATEs of a request that ran into the database's time limits or lost a lock conflict: 57014
 * query_canceled (statement_timeout), 55P03 lock_not_available (lock_timeout), 40P01
 * deadlock_detected (PostgreSQL aborted one of two transactions locking in opposite orders). The
 * same request can succeed when tried again.
 */
const RETRIABLE_CODES = new Set(['57014', '55P03', '40P01']);

/** What pg-pool throws when no connection frees up (or none opens) within connectionTimeoutMillis. */
const POOL_TIMEOUT_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
];

function isPoolTimeout(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; depth++) {
    if (POOL_TIMEOUT_MESSAGES.includes(e.message)) return true;
    e = e.cause;
  }
  return false;
}

/** True for a failure that says "the database is busy right now", not "this request is wrong". */
export function isRetriableDatabaseError(err: unknown): boolean {
  const code = pgCode(err);
  return (code !== undefined && RETRIABLE_CODES.has(code)) || isPoolTimeout(err);
}
