// What the `crm` commands that talk to a running server share: the error classes every command
// throws, and one HTTP exchange with its failures as one line (`<status> <error>: <message>
// [field: message]`, or "cannot reach <origin>: <reason>"). Used by `tools call`, `keys create`
// (REST API, /api/v1) and the admin commands with --url (admin API, /admin/v1, cli/admin-remote.ts).

/** A failure whose message is already the line to print. */
export class CliError extends Error {}
/** Bad command-line usage: exit code 2, as is customary, versus 1 for a failed operation. */
export class UsageError extends CliError {}

export const DEFAULT_URL = 'http://localhost:3000';
/** A remote call that takes longer than this is abandoned rather than left hanging. */
const REQUEST_TIMEOUT_MS = 60_000;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The innermost message of an error chain: drizzle's wrapper message repeats the query and its parameters. */
export function rootMessage(err: Error): string {
  let current: Error = err;
  for (let depth = 0; depth < 5 && current.cause instanceof Error; depth++) current = current.cause;
  return current.message || err.message;
}

/** A base URL given with --url (or $CRM_URL): http(s) only. */
export function parseBaseUrl(raw: string): URL {
  let base: URL;
  try {
    base = new URL(raw);
  } catch {
    throw new UsageError(`--url must be an http(s) URL such as ${DEFAULT_URL}, got "${raw}"`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new UsageError(`--url must be an http(s) URL such as ${DEFAULT_URL}, got "${raw}"`);
  }
  return base;
}

/** Why a request never got a response: the innermost error with a system code (ECONNREFUSED, ...). */
function networkReason(err: unknown): string {
  let current: unknown = err;
  for (let depth = 0; depth < 5; depth++) {
    if (current instanceof AggregateError && current.errors.length > 0) current = current.errors[0];
    if (current instanceof Error && 'code' in current && typeof current.code === 'string') {
      return current.message || current.code;
    }
    if (!(current instanceof Error) || current.cause === undefined) break;
    current = current.cause;
  }
  return err instanceof Error ? rootMessage(err) : String(err);
}

/** One line for an HTTP error: `<status> <error>: <message> [field: message; ...]`. */
function describeHttpError(status: number, statusText: string, body: unknown): string {
  if (!isRecord(body) || typeof body.error !== 'string') return `${status} ${statusText || 'HTTP error'}`;
  let text = `${status} ${body.error}`;
  if (typeof body.message === 'string' && body.message !== body.error) text += `: ${body.message}`;
  if (Array.isArray(body.details) && body.details.length > 0) {
    const details = body.details.filter(isRecord).map((d) => `${String(d.field)}: ${String(d.message)}`);
    text += ` [${details.join('; ')}]`;
  }
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export interface HttpCall {
  base: URL;
  token: string | undefined;
  method: string;
  /** The path under the base URL, e.g. /api/v1/leads or /admin/v1/organizations. */
  path: string;
  query?: URLSearchParams;
  body?: Record<string, unknown>;
}

/** A 2xx answer: JSON parsed, or the bytes of a file (any other media type). */
export type HttpAnswer =
  | { kind: 'json'; value: unknown }
  | { kind: 'file'; bytes: Uint8Array; contentType: string; filename: string | undefined };

/** Sends one request; a non-2xx answer or no answer at all is a CliError with its one line. */
export async function httpCall(call: HttpCall): Promise<HttpAnswer> {
  const url = new URL(call.base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${call.path}`;
  url.search = call.query?.toString() ?? '';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  let body: string | undefined;
  if (call.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.body);
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method: call.method,
      headers,
      body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    throw new CliError(`cannot reach ${call.base.origin}: ${networkReason(err)}`, { cause: err });
  }
  const contentType = res.headers.get('content-type') ?? '';
  if (res.ok && contentType !== '' && !/^application\/([a-z.+-]*\+)?json\b/i.test(contentType)) {
    const disposition = res.headers.get('content-disposition') ?? '';
    const filename = /filename="([^"]+)"/.exec(disposition)?.[1];
    return { kind: 'file', bytes: new Uint8Array(await res.arrayBuffer()), contentType, filename };
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    if (res.ok) throw new CliError(`${res.status} response is not JSON: ${text.slice(0, 200)}`);
  }
  if (!res.ok) throw new CliError(describeHttpError(res.status, res.statusText, parsed));
  return { kind: 'json', value: parsed };
}
