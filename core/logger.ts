// Structured JSON logs. Authorization headers, tokens, passwords and secrets are redacted at the
// logger, and every logged error goes through errorForLog (core/db/errors.ts), which drops the
// parameters of a failed query (e-mail, password hash, token hash) and the driver's row-value
// fields, so no call site can leak one by accident.
import { type Logger, pino } from 'pino';
import { errorForLog } from './db/errors.ts';

export type { Logger };

const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  '*.authorization',
  '*.password',
  '*.password_hash',
  '*.passwordHash',
  '*.token',
  '*.token_hash',
  '*.tokenHash',
  '*.plain_token',
  '*.refresh_token',
  '*.secret',
  'password',
  'password_hash',
  'passwordHash',
  'token',
  'token_hash',
  'tokenHash',
  'plain_token',
  'refresh_token',
  'secret',
];

/** Every top-level Error of a log object, whatever its key, is logged the safe way. */
function withSafeErrors(object: Record<string, unknown>): Record<string, unknown> {
  let out = object;
  for (const [key, value] of Object.entries(object)) {
    if (value instanceof Error) {
      if (out === object) out = { ...object };
      out[key] = errorForLog(value);
    }
  }
  return out;
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: errorForLog },
      formatters: { log: withSafeErrors },
    },
    destination,
  );
}
