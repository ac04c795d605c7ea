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

/**
 * Own fields of driver and drizzle errors that can carry row values: drizzle's `params` (the e-mail,
 * password hash and token hash of a failed insert), PostgreSQL's `detail` ("Key (token_hash)=(...)
 * already exists"), `where` and `internalQuery` (PL/pgSQL context with literal values). A log never
 * carries them.
 */
const VALUE_FIELDS = new Set(['params', 'detail', 'where', 'internalQuery', 'parameters']);
/** How many `cause` links a logged error keeps; drizzle wraps the driver error once. */
const MAX_CAUSE_DEPTH = 5;

/** drizzle's DrizzleQueryError message is "Failed query: <sql>\nparams: <values>": keep the SQL only. */
function withoutParams(text: string): string {
  return text.replace(/\nparams: [\s\S]*?(?=\n {4}at |$)/, '');
}

/**
 * An error as a log line may show it: type, message and stack without parameter values, the
 * primitive own fields (code, constraint, table, severity...) minus those that carry row values,
 * and the same for its `cause` chain. Used by the logger's serializer for every logged error.
 */
export function errorForLog(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return err;
  const out: Record<string, unknown> = {
    type: err.constructor?.name ?? err.name,
    message: withoutParams(err.message),
  };
  if (err.stack !== undefined) out.stack = withoutParams(err.stack);
  for (const [key, value] of Object.entries(err)) {
    if (VALUE_FIELDS.has(key) || key === 'cause' || key in out) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      out[key] = value;
  }
  if (err.cause !== undefined && depth < MAX_CAUSE_DEPTH) out.cause = errorForLog(err.cause, depth + 1);
  if (err instanceof AggregateError && depth < MAX_CAUSE_DEPTH) {
    out.errors = err.errors.map((inner) => errorForLog(inner, depth + 1));
  }
  return out;
}
