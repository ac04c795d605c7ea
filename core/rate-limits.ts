// The specification's request limits (Limits section), one fixed one-minute window each, counted
// in process memory on the embedded default and in Redis (shared by every API node) when REDIS_URL
// is set. When Redis cannot be reached, each node falls back to its own memory counters rather
// than letting requests through unlimited: limits get looser by the number of nodes, never absent.
import type { Redis } from 'ioredis';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export interface LimitRule {
  points: number;
  /** Window length in seconds. */
  duration: number;
  /** The 429 body's `error` sentence; clients branch on the status, not this text. */
  message: string;
}

export const LIMIT_RULES = {
  /** Every REST request under /api/v1, per client IP. */
  global: { points: 300, duration: 60, message: 'Too many requests, please try again later.' },
  /** /api/v1/auth/* (signup, login, refresh, password reset), per client IP. */
  auth: { points: 10, duration: 60, message: 'Too many authentication attempts, please try again later.' },
  /** The MCP endpoint, per API key (per user for session tokens); every message of a batch counts. */
  mcp: { points: 120, duration: 60, message: 'Too many MCP requests for this key, please slow down.' },
  /**
   * Failed bearer authentications on /mcp and /admin/v1, per client IP. Only failures count, and
   * the budget is checked before a token is verified, so guessing stops once it is spent.
   */
  auth_failures: {
    points: 10,
    duration: 60,
    message: 'Too many failed authentication attempts, please try again later.',
  },
  /** POST /api/v1/leads/bulk and /leads/bulk/tags, per user. */
  bulk: { points: 60, duration: 60, message: 'Too many bulk requests, please try again later.' },
  /** Endpoints that send SMS and WhatsApp messages, per user. */
  messaging: { points: 30, duration: 60, message: 'Too many messages sent, please try again later.' },
  /** Anonymous OAuth dynamic client registrations (POST /oauth/register), per IP. */
  oauth_register: {
    points: 20,
    duration: 3600,
    message: 'Too many client registrations from this address, please try again later.',
  },
  /** Public inbound provider-webhook ingest, per IP. */
  ingest: { points: 60, duration: 60, message: 'Too many inbound webhook requests, please try again later.' },
} as const satisfies Record<string, LimitRule>;

export type LimitName = keyof typeof LIMIT_RULES;

export interface LimitOutcome {
  name: LimitName;
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

function outcome(name: LimitName, res: RateLimiterRes, allowed: boolean): LimitOutcome {
  const rule = LIMIT_RULES[name];
  return {
    name,
    allowed,
    limit: rule.points,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}

export class RateLimits {
  private readonly limiters: Record<LimitName, RateLimiterAbstract>;

  constructor(redis?: Redis, prefix = 'crm:rl') {
    const build = (name: LimitName): RateLimiterAbstract => {
      const { points, duration } = LIMIT_RULES[name];
      const keyPrefix = `${prefix}:${name}`;
      const memory = new RateLimiterMemory({ points, duration, keyPrefix });
      if (!redis) return memory;
      return new RateLimiterRedis({
        storeClient: redis,
        points,
        duration,
        keyPrefix,
        insuranceLimiter: memory,
      });
    };
    this.limiters = {
      global: build('global'),
      auth: build('auth'),
      mcp: build('mcp'),
      auth_failures: build('auth_failures'),
      bulk: build('bulk'),
      messaging: build('messaging'),
      oauth_register: build('oauth_register'),
      ingest: build('ingest'),
    };
  }

  /**
   * Counts `points` requests (one by default; a JSON-RPC batch counts each message) against `name`
   * for `key`; a refused request still reports its headers.
   */
  async consume(name: LimitName, key: string, points = 1): Promise<LimitOutcome> {
    try {
      const res = await this.limiters[name].consume(key, points);
      return outcome(name, res, true);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return outcome(name, rejection, false);
      throw rejection;
    }
  }

  /** The state of `name` for `key` without counting anything: refused once the window is spent. */
  async peek(name: LimitName, key: string): Promise<LimitOutcome> {
    const rule = LIMIT_RULES[name];
    const res = await this.limiters[name].get(key);
    if (!res) {
      return { name, allowed: true, limit: rule.points, remaining: rule.points, resetSeconds: rule.duration };
    }
    return outcome(name, res, res.consumedPoints < rule.points);
  }
}

/**
 * The outcome whose headers a response reports when several limits apply: a refused one first,
 * otherwise the one closest to exhaustion (smallest share of its window left).
 */
export function mostConstrained(outcomes: readonly LimitOutcome[]): LimitOutcome | undefined {
  let best: LimitOutcome | undefined;
  for (const o of outcomes) {
    if (!best) {
      best = o;
      continue;
    }
    if (!o.allowed && best.allowed) best = o;
    else if (o.allowed === best.allowed && o.remaining / o.limit < best.remaining / best.limit) best = o;
  }
  return best;
}

export function rateLimitHeaders(o: LimitOutcome): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(o.limit),
    'RateLimit-Remaining': String(o.remaining),
    'RateLimit-Reset': String(o.resetSeconds),
  };
  if (!o.allowed) headers['Retry-After'] = String(o.resetSeconds);
  return headers;
}
