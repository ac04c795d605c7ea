// Public pages outside /api/v1 (PUBLIC_ROUTES of the areas: a proposal's /p/{token}): no user
// token, the per-IP budget of public pages and hooks (60 a minute, docs/contracts.md "Consistency rules";
// a public route under /api/v1 has the API's per-IP limits instead, counted by http/app.ts),
// and the area's handler answering its own page or JSON from the Fetch API request. The body reaches
// a handler only through `body()`: the reader of the REST routes (http/body.ts), so strict UTF-8 and
// the input guard hold on every public form and hook as they do under /api/v1.
import type { Handler, Hono } from 'hono';
import type { Services } from '../core/services.ts';
import { readRequestObject } from '../http/body.ts';
import type { AppEnv } from '../http/env.ts';
import { ipRateLimit, requestIp } from '../http/rate-limit.ts';
import { PUBLIC_ROUTES } from '../tools/index.ts';

const API_PATH_PREFIX = '/api/v1/';

export function mountPublicPages(app: Hono<AppEnv>, services: Services): void {
  const limit = ipRateLimit(services, ['ingest']);
  for (const route of PUBLIC_ROUTES) {
    // A public route under /api/v1 (the password reset's, under /api/v1/auth) is an API route: the
    // HTTP root already counts it against the API's per-IP limits (global, and auth under
    // /api/v1/auth/*, the strictest), so it spends nothing of the pages' and hooks' budget.
    const handle: Handler<AppEnv> = (c) =>
      route.handle(
        {
          raw: c.req.raw,
          params: c.req.param(),
          requestId: c.get('requestId'),
          ip: requestIp(c, services.config.trustProxyHops),
          body: (options) => readRequestObject(c.req.raw, options),
        },
        services,
      );
    if (route.path.startsWith(API_PATH_PREFIX)) app.on(route.method, route.path, handle);
    else app.on(route.method, route.path, limit, handle);
  }
}
