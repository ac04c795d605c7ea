// Request ids and one log line per request. The line carries the method and the path only (never the
// query string or a header), so a token a client put in a URL or header cannot reach the logs.
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../core/logger.ts';
import type { AppEnv } from './env.ts';
import { CLIENT_CLOSED_REQUEST } from './errors.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Keeps a well-formed incoming X-Request-Id (or makes one) for the request; http/answer-headers.ts
 * echoes it on the response, whatever made the response.
 */
export function requestId(): MiddlewareHandler<AppEnv> {
  return function requestIdHandler(c, next) {
    const incoming = c.req.header('x-request-id');
    c.set('requestId', incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID());
    return next();
  };
}

/**
 * One JSON line per request once its response is ready: method, path (without the query string),
 * status, duration_ms and request_id. Must run after the request-id middleware. A request whose
 * client closed the connection before it was read (http/errors.ts) is a warning with `aborted: true`.
 */
export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  if (typeof logger?.info !== 'function' || typeof logger.error !== 'function') {
    throw new TypeError('requestLog needs a pino logger');
  }
  return async function requestLogHandler(c, next) {
    const started = performance.now();
    await next();
    const status = c.res.status;
    const line = {
      method: c.req.method,
      path: c.req.path,
      status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      request_id: c.get('requestId'),
    };
    if (status === CLIENT_CLOSED_REQUEST) logger.warn({ ...line, aborted: true }, 'request');
    else if (status >= 500) logger.error(line, 'request');
    else logger.info(line, 'request');
  };
}
