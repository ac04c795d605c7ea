// The HTTP application: REST under /api/v1 (a route table over the tool registry), the MCP endpoint,
// the public auth routes and the operator's admin API. Translation only: every rule lives in core/
// and tools/.
import { randomUUID } from 'node:crypto';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { authenticate } from '../core/auth/authenticate.ts';
import type { AuthContext } from '../core/auth-context.ts';
import { AppError } from '../core/errors.ts';
import { invokeTool } from '../core/invoke.ts';
import { assertSafeUrl } from '../core/safe-input.ts';
import type { Services } from '../core/services.ts';
import { mountMcp } from '../mcp/http.ts';
import { mountAdminRoutes } from './admin-routes.ts';
import { mountAuthRoutes } from './auth-routes.ts';
import { readJsonObject } from './body.ts';
import { errorResponse } from './errors.ts';
import { mountFileRoutes } from './file-routes.ts';
import { methodsByPath } from './methods.ts';
import { mountOpenApi } from './openapi.ts';
import { corsMiddleware, mountOperations, requestLog, secureHeadersMiddleware } from './operations.ts';
import { enforceLimit, ipRateLimit, reportRateLimits } from './rate-limit.ts';
import type { Route } from './route.ts';
import { ROUTES } from './routes/index.ts';

export interface AppEnv {
  Variables: { requestId: string; auth: AuthContext };
}

export const MAX_BODY_BYTES = 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * Query parameters that would carry a credential in a URL. Only the Authorization header is ever
 * read, so such a token is never used: the request is answered as the header alone decides (401
 * without one). The parameters are dropped before the query reaches a tool, so a token is neither
 * stored nor echoed in a validation error.
 */
const TOKEN_QUERY_PARAMS = new Set(['access_token', 'token', 'api_key', 'apikey', 'key', 'bearer']);

function queryWithoutTokens(c: Context): Record<string, string> {
  return Object.fromEntries(Object.entries(c.req.query()).filter(([name]) => !TOKEN_QUERY_PARAMS.has(name)));
}

function restHandler(route: Route, services: Services) {
  return async function handleRoute(c: Context<AppEnv>): Promise<Response> {
    const auth = await authenticate(c.req.header('authorization'), services);
    // Per-user limits of a route (bulk, messaging) stack on the per-IP limit already counted.
    for (const name of route.limits) await enforceLimit(c, services, name, `user:${auth.userId}`);
    const body = route.method === 'GET' ? {} : await readJsonObject(c);
    const input = route.input({ params: c.req.param(), query: queryWithoutTokens(c), body });
    const output = await invokeTool(
      route.tool,
      input,
      { auth, surface: 'rest', requestId: c.get('requestId') },
      services,
    );
    return c.json(output, route.status);
  };
}

export function createApp(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { logger } = services;

  app.use('*', async function requestId(c, next) {
    const incoming = c.req.header('x-request-id');
    const id = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', id);
    await next();
    // Set on the final response: handlers that return their own Response (MCP) would drop a header set earlier.
    c.res.headers.set('X-Request-Id', id);
  });
  app.use('*', requestLog(logger));
  app.use('*', secureHeadersMiddleware());
  app.use('*', corsMiddleware(services.config));

  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    // The rest of an oversized body is never read, so the connection cannot carry another
    // request: `Connection: close` makes the server end it after the 413, and tells the client
    // to open a fresh one instead of losing its next request in the unread bytes.
    onError: (c) =>
      c.json(
        new AppError('payload_too_large', { message: 'Request bodies are limited to 1 MiB' }).body,
        413,
        { Connection: 'close' },
      ),
  });
  // File uploads (rest/file-routes.ts) carry their own, signed size limit.
  app.use('*', (c, next) => (c.req.path.startsWith('/files/') ? next() : limitBody(c, next)));

  app.use('*', reportRateLimits());
  // MCP is not under /api/v1: its calls count only toward the per-key MCP limit.
  app.use('/api/v1/*', ipRateLimit(services, ['global']));
  app.use('/api/v1/auth/*', ipRateLimit(services, ['auth']));
  // Path parameters and query values are checked once here, before any route (core/safe-input.ts).
  app.use('*', async function guardRequestUrl(c, next) {
    assertSafeUrl(c.req.url);
    await next();
  });

  mountOperations(app, services);
  mountOpenApi(app);

  mountAuthRoutes(app, services);
  mountAdminRoutes(app, services);
  mountMcp(app, services);
  mountFileRoutes(app, services);

  for (const route of ROUTES) {
    app.on(route.method, `/api/v1${route.path}`, restHandler(route, services));
  }

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
