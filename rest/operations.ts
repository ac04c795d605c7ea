// What an operator and a browser need around the API: liveness and readiness probes, one log line per
// request, secure response headers and CORS. The request log carries the method and the path only
// (never the query string or a header), so a token a client put in a URL or header cannot reach the
// logs through it.
import type { Hono, MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { secureHeaders } from 'hono/secure-headers';
import { type Config, isOrigin } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { Services } from '../core/services.ts';
import type { AppEnv } from './app.ts';

/** A readiness check that does not answer in this time counts as failed: a probe must not hang. */
export const READY_CHECK_TIMEOUT_MS = 1500;

/** Request headers a browser client may send cross-origin (beyond the CORS-safelisted ones). */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Request-Id',
  'X-MCP-Toolsets',
  // Browser MCP clients send it on every request after initialization.
  'Mcp-Protocol-Version',
];
/** Response headers a browser client may read. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
];
const CORS_ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Browsers cap this (Chromium at 2 hours); 10 minutes keeps a configuration change quick to apply. */
const CORS_MAX_AGE_SECONDS = 600;

type CheckResult = 'ok' | 'error';

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function check(logger: Logger, name: string, probe: () => Promise<void>): Promise<CheckResult> {
  try {
    await withTimeout(probe(), READY_CHECK_TIMEOUT_MS, name);
    return 'ok';
  } catch (err) {
    // The reason goes to the log, not to the unauthenticated caller of the probe.
    logger.warn(
      { check: name, err: err instanceof Error ? err.message : String(err) },
      'readiness check failed',
    );
    return 'error';
  }
}

/**
 * `GET /healthz`: the process is up and serving (liveness; no dependency is touched, so a database
 * outage does not get every node restarted). `GET /readyz`: the node can serve requests now
 * (readiness: database, its connection pool not saturated, and Redis when configured), 503
 * otherwise, so a load balancer sends new work to a node that can take it.
 */
export function mountOperations(app: Hono<AppEnv>, services: Services): void {
  const { db, redis, logger } = services;

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  app.get('/readyz', async (c) => {
    // Read before the probes run: the database probe itself queues for a connection when none is free.
    const databasePool = db.poolStatus();
    const [database, redisCheck] = await Promise.all([
      check(logger, 'database', () => db.ping()),
      redis
        ? check(logger, 'redis', async () => {
            const reply = await redis.ping();
            if (reply !== 'PONG') throw new Error(`unexpected PING reply ${reply}`);
          })
        : Promise.resolve('not_configured' as const),
    ]);
    const checks = { database, database_pool: databasePool, redis: redisCheck };
    const ready = database === 'ok' && databasePool === 'ok' && redisCheck !== 'error';
    c.header('Cache-Control', 'no-store');
    return ready ? c.json({ status: 'ready', checks }, 200) : c.json({ status: 'unavailable', checks }, 503);
  });
}

/**
 * One JSON line per request once its response is ready: method, path (without the query string),
 * status, duration_ms and request_id. Must run after the request-id middleware.
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
    if (status >= 500) logger.error(line, 'request');
    else logger.info(line, 'request');
  };
}

/**
 * nosniff, X-Frame-Options DENY, Referrer-Policy no-referrer, HSTS (browsers honour it over HTTPS
 * only), and a Content-Security-Policy that allows the server's own scripts and styles (plus inline
 * styles, which documentation pages commonly use) and forbids framing. A response that sets its own
 * security header (a page that needs more in its CSP) keeps it.
 */
export function secureHeadersMiddleware(): MiddlewareHandler {
  return secureHeaders({
    xFrameOptions: 'DENY',
    referrerPolicy: 'no-referrer',
    strictTransportSecurity: 'max-age=31536000; includeSubDomains',
    xContentTypeOptions: true,
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
    overwrite: false,
  });
}

function isPreflight(method: string, origin: string | undefined, requestMethod: string | undefined): boolean {
  return method === 'OPTIONS' && origin !== undefined && requestMethod !== undefined;
}

/**
 * CORS for the origins in CORS_ALLOWED_ORIGINS only. With none configured no CORS header is ever
 * sent; a request from an unlisted origin gets none either. Preflights are answered here, before
 * rate limits and authentication, whatever their origin: a preflight carries no credential and
 * would otherwise spend the caller's rate budget. No credentials mode: the API authenticates with
 * the Authorization header, never with cookies.
 */
export function corsMiddleware(config: Pick<Config, 'corsAllowedOrigins'>): MiddlewareHandler {
  const origins = [...config.corsAllowedOrigins];
  const invalid = origins.filter((o) => !isOrigin(o));
  if (invalid.length > 0) {
    throw new TypeError(
      `corsMiddleware needs exact origins such as https://app.example.com, got ${invalid.join(', ')}`,
    );
  }
  const allowed = new Set(origins);
  const listedOriginCors = cors({
    origin: (origin) => (allowed.has(origin) ? origin : null),
    allowMethods: CORS_ALLOWED_METHODS,
    allowHeaders: CORS_ALLOWED_HEADERS,
    exposeHeaders: CORS_EXPOSED_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS,
    credentials: false,
  });

  return async function corsHandler(c, next) {
    const origin = c.req.header('origin');
    if (origin !== undefined && allowed.has(origin)) return listedOriginCors(c, next);
    if (isPreflight(c.req.method, origin, c.req.header('access-control-request-method'))) {
      // No Access-Control-Allow-Origin: the browser refuses the cross-origin call.
      if (allowed.size > 0) c.header('Vary', 'Origin');
      return c.body(null, 204);
    }
    await next();
    // The same URL answers listed origins with CORS headers: shared caches must key on Origin.
    if (allowed.size > 0) c.res.headers.append('Vary', 'Origin');
  };
}
