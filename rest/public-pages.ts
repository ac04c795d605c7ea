// Public pages outside /api/v1 (PUBLIC_ROUTES of the areas: a proposal's /p/{token}): no user
// token, the per-IP budget of public pages and hooks (60 a minute, docs/contracts.md "Consistency rules"),
// and the area's handler answering its own page or JSON from the Fetch API request. The body reaches
// a handler only through `body()`: the reader of the REST routes (http/body.ts), so strict UTF-8 and
// the input guard hold on every public form and hook as they do under /api/v1.
import type { Hono } from 'hono';
import type { Services } from '../core/services.ts';
import { readRequestObject } from '../http/body.ts';
import type { AppEnv } from '../http/env.ts';
import { ipRateLimit, requestIp } from '../http/rate-limit.ts';
import { PUBLIC_ROUTES } from '../tools/index.ts';

export function mountPublicPages(app: Hono<AppEnv>, services: Services): void {
  const limit = ipRateLimit(services, ['ingest']);
  for (const route of PUBLIC_ROUTES) {
    app.on(route.method, route.path, limit, (c) =>
      route.handle(
        {
          raw: c.req.raw,
          params: c.req.param(),
          requestId: c.get('requestId'),
          ip: requestIp(c, services.config.trustProxyHops),
          body: (options) => readRequestObject(c.req.raw, options),
        },
        services,
      ),
    );
  }
}
