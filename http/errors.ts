// Renders any thrown value as the specification's error envelope. Unknown failures are logged with
// the request id and answered with a generic 500 that reveals nothing.
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { toAppError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';

export function errorResponse(c: Context, err: unknown, logger: Logger): Response {
  const appError = toAppError(err);
  if (appError.code === 'internal') {
    logger.error({ err: appError.cause ?? err, requestId: c.get('requestId') }, 'unhandled error');
    return c.json({ ...appError.body, request_id: c.get('requestId') }, 500);
  }
  // An error that says when to try again (429, a busy database's 503) says it in the header too.
  const retryAfter = appError.body.retry_after;
  if (typeof retryAfter === 'number') c.header('Retry-After', String(retryAfter));
  return c.json(appError.body, appError.status as ContentfulStatusCode);
}
