// The HTTP root: what every request goes through whichever surface it is for (request id, the
// answer's headers, request log, CORS, the body cap, per-IP limits, the URL guard),
// health and readiness, authentication of the caller (http/authenticate.ts, placed by each surface on
// its routes that take a user token), and the surfaces mounted as sibling sub-apps: REST (rest/) and
// MCP (mcp/).
// It also answers what no surface does: 404 for unknown paths, 405 with Allow for a wrong method,
// and the error envelope for every failure.
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError } from '../core/errors.ts';
import { assertSafeUrl } from '../core/safe-input.ts';
import type { Services } from '../core/services.ts';
import { createMcpApp } from '../mcp/http.ts';
import { FILES_PATH_PREFIX } from '../rest/file-routes.ts';
import { createRestApp } from '../rest/index.ts';
import { answerHeaders } from './answer-headers.ts';
import { authenticateCaller, bearerChallenge } from './authenticate.ts';
import { corsMiddleware } from './browser.ts';
import type { AppEnv } from './env.ts';
import { errorResponse } from './errors.ts';
import { mountHealthChecks } from './health.ts';
import { methodsByPath } from './methods.ts';
import { ipRateLimit } from './rate-limit.ts';
import { requestId, requestLog } from './request-log.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

export function createApp(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { logger } = services;

  app.use('*', requestId());
  // Security headers, X-Request-Id and RateLimit-* on whatever answers, written once at the end.
  app.use('*', answerHeaders());
  app.use('*', requestLog(logger));
  app.use('*', corsMiddleware(services.config));

  const payloadTooLarge = (c: Context<AppEnv>) =>
    c.json(
      new AppError('payload_too_large', { message: 'Request bodies are limited to 1 MiB' }).body,
      413,
      // The rest of an oversized body is never read, so the connection cannot carry another
      // request: `Connection: close` makes the server end it after the 413, and tells the client
      // to open a fresh one instead of losing its next request in the unread bytes.
      { Connection: 'close' },
    );
  const limitStreamedBody = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: payloadTooLarge });
  // File uploads (rest/file-routes.ts) carry their own, signed size limit. A body with a
  // Content-Length (HTTP framing holds it to that length) is judged by the header alone, as Hono's
  // bodyLimit does, but without asking for the body first: that question makes @hono/node-server
  // build a full Request and stream, which then cost every JSON read a copy (about 4% of a list's
  // CPU, more of a POST's). A GET or HEAD has no body; a chunked one is counted as it streams.
  app.use('*', function limitRequestBody(c, next) {
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD' || c.req.path.startsWith(FILES_PATH_PREFIX)) return next();
    const length = c.req.header('content-length');
    if (length !== undefined && c.req.header('transfer-encoding') === undefined) {
      return Number.parseInt(length || '0', 10) > MAX_BODY_BYTES
        ? Promise.resolve(payloadTooLarge(c))
        : next();
    }
    return limitStreamedBody(c, next);
  });

  // MCP is not under /api/v1: its calls count only toward the per-key MCP limit.
  app.use('/api/v1/*', ipRateLimit(services, ['global']));
  app.use('/api/v1/auth/*', ipRateLimit(services, ['auth']));
  // Path parameters and query values are checked once here, before any route (core/safe-input.ts).
  app.use('*', async function guardRequestUrl(c, next) {
    assertSafeUrl(c.req.url);
    await next();
  });

  mountHealthChecks(app, services);
  // One authentication per request, built here for both surfaces; each sub-app places it on the
  // routes that take a user token. REST answers a failure plainly; /mcp spends the per-IP budget of
  // failed authentications on it and sends the Bearer challenge with a 401.
  // Each names its resource: an OAuth token is accepted only on the one it was issued for (RFC 8707).
  const authenticateRest = authenticateCaller(services, { limitFailures: false, resource: 'api' });
  const authenticateMcp = authenticateCaller(services, {
    limitFailures: true,
    challenge: bearerChallenge(services.config.publicBaseUrl),
    resource: 'mcp',
  });
  app.route('/', createRestApp(services, { authenticate: authenticateRest }));
  app.route('/', createMcpApp(services, { authenticate: authenticateMcp }));

  // Built on first use, when every route is mounted.
  let allowedMethods: ((path: string) => string[]) | undefined;
  app.notFound((c) => {
    allowedMethods ??= methodsByPath(app);
    const allowed = allowedMethods(c.req.path);
    // A handler that answers "not found" itself (an unknown docs asset) keeps its 404.
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      const error = new AppError('method_not_allowed', {
        message: `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allowed.join(', ')}`,
      });
      return c.json(error.body, 405, { Allow: allowed.join(', ') });
    }
    return c.json(
      new AppError('route_not_found', { message: `No route for ${c.req.method} ${c.req.path}` }).body,
      404,
    );
  });
  app.onError((err, c) => errorResponse(c, err, logger));
  return app;
}
