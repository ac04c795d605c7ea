// Renders any thrown value as the specification's error envelope. Unknown failures are logged with
// the request id and answered with a generic 500 that reveals nothing. A client that closed its
// connection before its body was read is no failure of ours: it is answered 499 (nginx's "client
// closed request"; nobody reads it) and the request log says `aborted: true` at warn level.
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { toAppError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';

/** The status of a request whose client went away before it was read (http/request-log.ts). */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * Whether `err` is the client going away: Node fails the body stream with Error('aborted', code
 * ECONNRESET) when the socket closes mid-body, and the Fetch request's signal is aborted then.
 */
function isClientAbort(c: Context, err: unknown): boolean {
  if (c.req.raw.signal.aborted) return true;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.message === 'aborted' && 'code' in e && e.code === 'ECONNRESET') return true;
  }
  return false;
}

export function errorResponse(c: Context, err: unknown, logger: Logger): Response {
  const appError = toAppError(err);
  if (appError.code === 'internal') {
    if (isClientAbort(c, appError.cause ?? err)) return new Response(null, { status: CLIENT_CLOSED_REQUEST });
    logger.error({ err: appError.cause ?? err, requestId: c.get('requestId') }, 'unhandled error');
    return c.json({ ...appError.body, request_id: c.get('requestId') }, 500);
  }
  // An error that says when to try again (429, a busy database's 503) says it in the header too.
  const retryAfter = appError.body.retry_after;
  if (typeof retryAfter === 'number') c.header('Retry-After', String(retryAfter));
  return c.json(appError.body, appError.status as ContentfulStatusCode);
}
