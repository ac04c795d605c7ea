// Structured JSON logs. Authorization headers, tokens, passwords and secrets are redacted at the
// logger, so no call site can leak one by accident.
import { type Logger, pino } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  '*.password',
  '*.token',
  '*.plain_token',
  '*.refresh_token',
  '*.secret',
  'password',
  'token',
  'plain_token',
  'refresh_token',
  'secret',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}
