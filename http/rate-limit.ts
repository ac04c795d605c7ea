// Applies the specification's request limits to HTTP requests. Every limit a request counts against
// is recorded on the context; the response reports the one closest to exhaustion in RateLimit-*
// headers (docs/contracts.md "Request limits"), and the first refused limit answers 429 with that limiter's sentence.
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { clientIp } from '../core/client-ip.ts';
import { AppError } from '../core/errors.ts';
import { type LimitName, type LimitOutcome, mostConstrained, rateLimitHeaders } from '../core/rate-limits.ts';
import type { Services } from '../core/services.ts';

/** Outcomes per request, keyed by the request object so any Hono env can use these helpers. */
const outcomesOf = new WeakMap<Request, LimitOutcome[]>();

/** The socket peer, or none for in-process requests (app.request in tests has no socket). */
function socketAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

export function requestIp(c: Context, trustedHops: number): string {
  return clientIp(socketAddress(c), c.req.header('x-forwarded-for'), trustedHops);
}

/** Remembers an outcome for the RateLimit-* headers of this request's response. */
export function recordOutcome(c: Context, outcome: LimitOutcome): void {
  const seen = outcomesOf.get(c.req.raw) ?? [];
  seen.push(outcome);
  outcomesOf.set(c.req.raw, seen);
}

/** The 429 a refused limit answers, with its sentence and when to retry. */
export function refusal(outcome: LimitOutcome): AppError {
  return new AppError('rate_limited', {
    error: outcome.message,
    extra: { retry_after: outcome.resetSeconds },
  });
}

/**
 * Counts the request against `name` for `key` (`points` times: each message of a JSON-RPC batch
 * is one); throws the limiter's 429 when refused.
 */
export async function enforceLimit(
  c: Context,
  services: Services,
  name: LimitName,
  key: string,
  points = 1,
): Promise<void> {
  if (!services.rateLimits) return;
  const outcome = await services.rateLimits.consume(name, key, points);
  recordOutcome(c, outcome);
  if (!outcome.allowed) throw refusal(outcome);
}

/** The RateLimit-* headers of the most constrained limit the request counted against (none if none). */
export function limitHeadersOf(c: Context): [name: string, value: string][] {
  const reported = mostConstrained(outcomesOf.get(c.req.raw) ?? []);
  return reported ? Object.entries(rateLimitHeaders(reported)) : [];
}

/**
 * Middleware counting every request under its path against per-IP limits, e.g.
 * `ipRateLimit(services, ['global'])`; `auth` stacks on top for /api/v1/auth/*.
 */
export function ipRateLimit(services: Services, names: readonly LimitName[]): MiddlewareHandler {
  if (names.length === 0) throw new Error('ipRateLimit needs at least one limit');
  return async function ipRateLimitHandler(c, next) {
    // Limits switched off (RATE_LIMITS=off): nothing to count, so no address to work out.
    if (!services.rateLimits) return next();
    const ip = requestIp(c, services.config.trustProxyHops);
    for (const name of names) await enforceLimit(c, services, name, `ip:${ip}`);
    await next();
  };
}
