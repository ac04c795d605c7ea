// One error class for every failure a caller should understand. A string code picks the row of
// ERROR_TABLE, which alone decides the HTTP status, the default `error` text and how MCP shows it,
// so REST and MCP can never disagree about what a failure means.
import { isRetriableDatabaseError } from './db/errors.ts';

export interface ErrorDetail {
  field: string;
  message: string;
  code: string;
}

/** The specification's error envelope, plus extra keys some errors carry (feature, required_permission). */
export interface ErrorBody {
  error: string;
  code?: string;
  message?: string;
  details?: ErrorDetail[];
  [extra: string]: unknown;
}

/**
 * `tool_error`: MCP shows it as an `isError` tool result carrying the same envelope as REST.
 * `jsonrpc`: it happens before any tool runs (transport, authentication) and is a JSON-RPC error.
 */
type McpForm = { kind: 'tool_error' } | { kind: 'jsonrpc'; code: number };

interface ErrorRow {
  status: number;
  /** The `error` text when the thrower gives none; some are fixed by the specification word for word. */
  error: string;
  mcp: McpForm;
}

const toolError: McpForm = { kind: 'tool_error' };

export const ERROR_TABLE = {
  validation_failed: { status: 400, error: 'Validation failed', mcp: toolError },
  invalid_id: { status: 400, error: 'Invalid id', mcp: toolError },
  invalid_json: { status: 400, error: 'Malformed JSON body', mcp: { kind: 'jsonrpc', code: -32700 } },
  // The telephony provider refused the account's login (tools/telephony): the Account SID or auth token is wrong.
  telephony_credentials_invalid: { status: 400, error: 'Telephony credentials refused', mcp: toolError },
  user_owns_records: { status: 400, error: 'User owns records', mcp: toolError },
  invalid_operation: { status: 400, error: 'Operation not allowed', mcp: toolError },
  // A status move its state machine (core/state-machine.ts) does not declare.
  invalid_transition: { status: 400, error: 'Invalid transition', mcp: toolError },
  tool_not_enabled: { status: 400, error: 'Tool not enabled', mcp: toolError },
  // A password-reset token that is unknown, used or expired (tools/password-reset). Not `invalid_token`:
  // that code is the 401 of a bad bearer credential, and a code decides one status.
  invalid_reset_token: { status: 400, error: 'Invalid or expired reset token', mcp: toolError },
  authentication_required: {
    status: 401,
    error: 'Authentication required',
    mcp: { kind: 'jsonrpc', code: -32001 },
  },
  invalid_token: { status: 401, error: 'Invalid or expired token', mcp: { kind: 'jsonrpc', code: -32001 } },
  token_expired: { status: 401, error: 'Token expired', mcp: { kind: 'jsonrpc', code: -32001 } },
  invalid_jwt: { status: 401, error: 'Invalid token', mcp: { kind: 'jsonrpc', code: -32001 } },
  invalid_credentials: { status: 401, error: 'Invalid email or password', mcp: toolError },
  invalid_refresh_token: { status: 401, error: 'Invalid or expired refresh token', mcp: toolError },
  plan_upgrade_required: { status: 402, error: 'plan_upgrade_required', mcp: toolError },
  feature_disabled: { status: 402, error: 'feature_disabled', mcp: toolError },
  forbidden: { status: 403, error: 'Forbidden', mcp: toolError },
  scope_missing: { status: 403, error: 'Token lacks required scope', mcp: toolError },
  organization_inactive: {
    status: 403,
    error: 'Organization is inactive',
    mcp: { kind: 'jsonrpc', code: -32001 },
  },
  signup_disabled: { status: 403, error: 'Signup is disabled', mcp: toolError },
  not_found: { status: 404, error: 'Not found', mcp: toolError },
  route_not_found: { status: 404, error: 'Not found', mcp: toolError },
  method_not_allowed: { status: 405, error: 'Method not allowed', mcp: toolError },
  conflict: { status: 409, error: 'Conflict', mcp: toolError },
  // The organization saved no telephony provider account (PUT /api/v1/settings/telephony) yet.
  telephony_not_configured: { status: 409, error: 'Telephony not configured', mcp: toolError },
  // Call monitoring (tools/calls): the call is not live, or it has no conference to join.
  call_not_monitorable: { status: 409, error: 'Call not monitorable', mcp: toolError },
  // A lead already has an active enrollment in the workflow (one at a time: tools/workflows/enroll.ts).
  already_enrolled: { status: 409, error: 'Already enrolled', mcp: toolError },
  // REST Idempotency-Key (core/idempotency.ts): the first request with the key is still running.
  idempotency_key_in_use: { status: 409, error: 'Idempotency key in use', mcp: toolError },
  payload_too_large: { status: 413, error: 'Request body too large', mcp: toolError },
  unsupported_media_type: { status: 415, error: 'Content-Type must be application/json', mcp: toolError },
  // REST Idempotency-Key (core/idempotency.ts): the key was used for a different request.
  idempotency_key_reused: { status: 422, error: 'Idempotency key reused', mcp: toolError },
  rate_limited: {
    status: 429,
    error: 'Too many requests, please try again later.',
    mcp: { kind: 'jsonrpc', code: -32000 },
  },
  internal: { status: 500, error: 'Internal server error', mcp: { kind: 'jsonrpc', code: -32603 } },
  // The mail server refused a message or could not be reached (core/mail.ts); `permanent` says whether a retry can help.
  mail_failed: { status: 502, error: 'Mail delivery failed', mcp: toolError },
  // The telephony provider could not be reached, did not answer in time or failed (core/telephony.ts).
  telephony_unavailable: { status: 502, error: 'Telephony provider unavailable', mcp: toolError },
  // A tool result, not a JSON-RPC error: the model reads `retry_after` and tries again.
  unavailable: { status: 503, error: 'Service unavailable', mcp: toolError },
} as const satisfies Record<string, ErrorRow>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export interface AppErrorOptions {
  /** Overrides the table's `error` text (the 403 scope error names the scope, for example). */
  error?: string;
  message?: string;
  details?: ErrorDetail[];
  /** Extra top-level keys of the body, e.g. `{ feature, current_plan }` on a 402. */
  extra?: Record<string, unknown>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly body: ErrorBody;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    const row: ErrorRow = ERROR_TABLE[code];
    super(options.message ?? options.error ?? row.error, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = row.status;
    const body: ErrorBody = { error: options.error ?? row.error, code };
    if (options.message !== undefined) body.message = options.message;
    if (options.details !== undefined) body.details = options.details;
    Object.assign(body, options.extra);
    this.body = body;
  }

  get mcpForm(): McpForm {
    return ERROR_TABLE[this.code].mcp;
  }
}

export function notFound(what = 'Record'): AppError {
  return new AppError('not_found', { message: `${what} not found` });
}

export function validationError(details: ErrorDetail[], message?: string): AppError {
  return new AppError('validation_failed', { details, ...(message ? { message } : {}) });
}

/** Seconds a caller is told to wait (`retry_after`, Retry-After) after the database was too busy. */
const DATABASE_BUSY_RETRY_AFTER_SECONDS = 2;

/**
 * Turns anything thrown into an AppError. A database time limit (statement, lock wait, free
 * connection) is a retriable 503; other unknown failures become a generic 500 (the cause is logged,
 * never shown).
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isRetriableDatabaseError(err)) {
    return new AppError('unavailable', {
      message: 'The database is busy; try again shortly',
      extra: { retry_after: DATABASE_BUSY_RETRY_AFTER_SECONDS },
      cause: err,
    });
  }
  return new AppError('internal', { cause: err });
}
