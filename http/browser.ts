// What browsers need around the API: CORS for the configured origins only. The security headers
// of every response are http/answer-headers.ts's.
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { type Config, isOrigin } from '../core/config.ts';

/** Request headers a browser client may send cross-origin (beyond the CORS-safelisted ones). */
const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Request-Id',
  'X-MCP-Toolsets',
  // A REST POST may carry one (core/idempotency.ts).
  'Idempotency-Key',
  // Browser MCP clients send it on every request after initialization.
  'Mcp-Protocol-Version',
];
/** Response headers a browser client may read. */
const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  // Set on a kept answer sent again for an Idempotency-Key (core/idempotency.ts).
  'Idempotent-Replayed',
];
const CORS_ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Browsers cap this (Chromium at 2 hours); 10 minutes keeps a configuration change quick to apply. */
const CORS_MAX_AGE_SECONDS = 600;

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
