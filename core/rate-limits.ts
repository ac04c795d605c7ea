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
  /** Public inbound provider-webhook ingest, per IP. */
  ingest: { points: 60, duration: 60, message: 'Too many inbound webhook requests, please try again later.' },
} as const satisfies Record<string, LimitRule>;

export type LimitName = keyof typeof LIMIT_RULES;

/**
 * A budget an area brings for its own endpoints (the OAuth area's client registrations): declared
 * beside the code that spends it, counted like the kernel's, in memory or in Redis. Its name must
 * not be one of the kernel's.
 */
export interface AreaLimit extends LimitRule {
  name: string;
}

export interface LimitOutcome {
  /** The kernel limit's name, or an area limit's. */
  name: string;
  /** The 429 body's `error` sentence. */
  message: string;
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

function outcome(rule: AreaLimit, res: RateLimiterRes, allowed: boolean): LimitOutcome {
  return {
    name: rule.name,
    message: rule.message,
    allowed,
    limit: rule.points,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}

function isKernelLimit(name: string): name is LimitName {
  return Object.hasOwn(LIMIT_RULES, name);
}

export class RateLimits {
  /** One limiter per limit name, built on first use: the kernel's and the areas' alike. */
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    private readonly redis?: Redis,
    private readonly prefix = 'crm:rl',
  ) {}

  private limiterFor(rule: AreaLimit): RateLimiterAbstract {
    let limiter = this.limiters.get(rule.name);
    if (!limiter) {
      const { points, duration } = rule;
      const keyPrefix = `${this.prefix}:${rule.name}`;
      const memory = new RateLimiterMemory({ points, duration, keyPrefix });
      limiter = this.redis
        ? new RateLimiterRedis({
            storeClient: this.redis,
            points,
            duration,
            keyPrefix,
            insuranceLimiter: memory,
          })
        : memory;
      this.limiters.set(rule.name, limiter);
    }
    return limiter;
  }

  /**
   * Counts `points` requests (one by default; a JSON-RPC batch counts each message) against the
   * kernel limit `name` for `key`; a refused request still reports its headers.
   */
  consume(name: LimitName, key: string, points = 1): Promise<LimitOutcome> {
    return this.count({ name, ...LIMIT_RULES[name] }, key, points);
  }

  /** The same for a limit an area declares beside its endpoint; a kernel limit's name is refused. */
  async consumeRule(rule: AreaLimit, key: string, points = 1): Promise<LimitOutcome> {
    if (isKernelLimit(rule.name)) {
      throw new Error(`Limit ${rule.name} is the kernel's; an area limit needs a name of its own`);
    }
    return this.count(rule, key, points);
  }

  private async count(rule: AreaLimit, key: string, points: number): Promise<LimitOutcome> {
    try {
      const res = await this.limiterFor(rule).consume(key, points);
      return outcome(rule, res, true);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return outcome(rule, rejection, false);
      throw rejection;
    }
  }

  /** The state of `name` for `key` without counting anything: refused once the window is spent. */
  async peek(name: LimitName, key: string): Promise<LimitOutcome> {
    const rule = { name, ...LIMIT_RULES[name] };
    const res = await this.limiterFor(rule).get(key);
    if (!res) {
      return {
        name,
        message: rule.message,
        allowed: true,
        limit: rule.points,
        remaining: rule.points,
        resetSeconds: rule.duration,
      };
    }
    return outcome(rule, res, res.consumedPoints < rule.points);
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
