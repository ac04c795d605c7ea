// The headers every answer carries: the security headers browsers need, the request id, and the
// RateLimit-* headers of the most constrained limit the request counted against. They are written
// once, after the answer is made, whatever made it (a handler, an error, a 429, a page with its own
// policy, an SDK's Response).
//
// On a Node server they go on the connection's response (`setHeader`), where Node merges them
// under the answer's own headers when the head is written: the answer's own value wins, as
// secureHeaders' `overwrite: false` asks, and the answer itself is never touched. Setting them on
// the answer's Headers instead made @hono/node-server turn its plain header object into a WHATWG
// Headers (a validated set per header, a sorted copy to write) on every request: about 3% of a list
// request's CPU (docs/decisions.md "The answer's headers, written once"). Without a Node response
// (app.request in tests, another runtime) they are set on the answer's Headers, with the same rule.
import { ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.ts';
import { limitHeadersOf } from './rate-limit.ts';

/**
 * Hono's secureHeaders with the product's options, as it writes them (test/answer-headers.test.ts
 * holds the two equal): nosniff, X-Frame-Options DENY, Referrer-Policy no-referrer, HSTS (browsers
 * honour it over HTTPS only), the cross-origin isolation defaults, and a Content-Security-Policy
 * that allows the server's own scripts and styles (plus inline styles, which documentation pages
 * commonly use) and forbids framing. A page that needs more in its policy sends its own.
 */
export const SECURITY_HEADERS: readonly (readonly [name: string, value: string])[] = [
  [
    'content-security-policy',
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
      "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; " +
      "form-action 'self'; frame-ancestors 'none'",
  ],
  ['cross-origin-opener-policy', 'same-origin'],
  ['cross-origin-resource-policy', 'same-origin'],
  ['origin-agent-cluster', '?1'],
  ['referrer-policy', 'no-referrer'],
  ['strict-transport-security', 'max-age=31536000; includeSubDomains'],
  ['x-content-type-options', 'nosniff'],
  ['x-dns-prefetch-control', 'off'],
  ['x-download-options', 'noopen'],
  ['x-frame-options', 'DENY'],
  ['x-permitted-cross-domain-policies', 'none'],
  ['x-xss-protection', '0'],
];

/** The Node response under the request, when @hono/node-server serves it. */
function nodeResponseOf(c: Context): ServerResponse | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null || !('outgoing' in env)) return undefined;
  return env.outgoing instanceof ServerResponse ? env.outgoing : undefined;
}

/**
 * Outermost but for the request id it echoes (http/request-log.ts requestId runs before it): adds
 * the security headers where the answer has none of its own, and sets X-Request-Id and the
 * RateLimit-* headers.
 */
export function answerHeaders(): MiddlewareHandler<AppEnv> {
  return async function answerHeadersHandler(c, next) {
    await next();
    const requestId = c.get('requestId');
    const limits = limitHeadersOf(c);
    const outgoing = nodeResponseOf(c);
    if (outgoing) {
      // An answer written to the connection directly has sent its head already.
      if (outgoing.headersSent) return;
      for (const [name, value] of SECURITY_HEADERS) outgoing.setHeader(name, value);
      outgoing.setHeader('x-request-id', requestId);
      for (const [name, value] of limits) outgoing.setHeader(name, value);
      return;
    }
    const headers = c.res.headers;
    for (const [name, value] of SECURITY_HEADERS) if (!headers.has(name)) headers.set(name, value);
    headers.set('x-request-id', requestId);
    for (const [name, value] of limits) headers.set(name, value);
  };
}
