// Locks in the specification's request limits: each at its boundary (N allowed, N+1 refused),
// their 429 bodies and RateLimit-* headers, how they stack, and whose address counts.

import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { describe, expect } from 'vitest';
import { clientIp, normalizeIp } from '../core/client-ip.ts';
import { type LimitOutcome, mostConstrained, RateLimits } from '../core/rate-limits.ts';
import { fileTest } from './fixtures/file-test.ts';
import { createTestContext, json } from './helpers.ts';

const test = fileTest({ env: { TRUST_PROXY: '1' } });
let ipSeq = 0;
/** A fresh client address per scenario (TRUST_PROXY=1 makes X-Forwarded-For the client). */
const freshIp = () => `203.0.113.${++ipSeq}`;

const from = (ip: string, extra: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...extra });

async function repeat(n: number, send: (i: number) => Promise<Response>): Promise<Response[]> {
  const out: Response[] = [];
  for (let i = 0; i < n; i++) out.push(await send(i));
  return out;
}

describe('global limit: 300 per minute per client IP on /api/v1', () => {
  test('allows 300, refuses the 301st with the too-many-requests sentence and headers', async ({
    t,
    org,
  }) => {
    const ip = freshIp();
    const responses = await repeat(300, () => t.request('GET', '/api/v1/me', { headers: from(ip) }));
    expect(responses.every((r) => r.status === 401)).toBe(true);
    const last = responses[299];
    expect(last?.headers.get('ratelimit-limit')).toBe('300');
    expect(last?.headers.get('ratelimit-remaining')).toBe('0');

    const refused = await t.request('GET', '/api/v1/me', { headers: from(ip) });
    expect(refused.status).toBe(429);
    expect(await json(refused)).toMatchObject({ error: 'Too many requests, please try again later.' });
    expect(refused.headers.get('ratelimit-limit')).toBe('300');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    const reset = Number(refused.headers.get('ratelimit-reset'));
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(60);
    expect(refused.headers.get('retry-after')).toBe(String(reset));

    // Another client is unaffected.
    const other = await t.request('GET', '/api/v1/me', { token: org.token, headers: from(freshIp()) });
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe('299');
  });
});

describe('authentication limit: 10 per minute per IP on /api/v1/auth/*', () => {
  test('allows 10 attempts, refuses the 11th with the authentication sentence, and stacks on the global limit', async ({
    t,
    org,
  }) => {
    const ip = freshIp();
    const attempt = () =>
      t.request('POST', '/api/v1/auth/login', {
        headers: from(ip),
        body: { email: 'nobody@example.test', password: 'wrong password' },
      });
    const responses = await repeat(10, attempt);
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(401));
    // The auth limit is the one closest to exhaustion, so its numbers are reported.
    expect(responses[9]?.headers.get('ratelimit-limit')).toBe('10');
    expect(responses[9]?.headers.get('ratelimit-remaining')).toBe('0');

    const refused = await attempt();
    expect(refused.status).toBe(429);
    expect(await json(refused)).toMatchObject({
      error: 'Too many authentication attempts, please try again later.',
    });
    expect(refused.headers.get('ratelimit-limit')).toBe('10');

    // The 11 auth requests also counted against the same IP's 300 (stacking).
    const after = await t.request('GET', '/api/v1/me', { token: org.token, headers: from(ip) });
    expect(after.status).toBe(200);
    expect(after.headers.get('ratelimit-limit')).toBe('300');
    expect(after.headers.get('ratelimit-remaining')).toBe(String(300 - 12));
  });
});

describe('bulk limit: 60 per minute per user on the bulk routes', () => {
  test('counts per user across addresses, refuses the 61st, and stacks with the per-IP limit', async ({
    t,
    org,
  }) => {
    const member = await t.createUser(org.orgId, 'member');
    const bulk = (ip: string, path = '/api/v1/leads/bulk') =>
      t.request('POST', path, { token: member.token, headers: from(ip), body: { items: [] } });
    const sharedIp = freshIp();
    // Half from one address, half from fresh ones: the per-user count ignores the address.
    const responses = await repeat(60, (i) =>
      i % 2 === 0 ? bulk(sharedIp) : bulk(freshIp(), i % 4 === 1 ? '/api/v1/leads/bulk/tags' : undefined),
    );
    expect(responses.every((r) => r.status === 400)).toBe(true);
    expect(responses[59]?.headers.get('ratelimit-limit')).toBe('60');
    expect(responses[59]?.headers.get('ratelimit-remaining')).toBe('0');

    const refused = await bulk(freshIp());
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-limit')).toBe('60');
    expect((await json(refused)).error).toMatch(/too many bulk requests/i);

    // Another user is unaffected; the shared address has 30 of its 300 used.
    const other = await t.request('POST', '/api/v1/leads/bulk', {
      token: org.token,
      headers: from(sharedIp),
      body: { items: [] },
    });
    expect(other.status).toBe(400);
    const me = await t.request('GET', '/api/v1/me', { token: org.token, headers: from(sharedIp) });
    expect(me.headers.get('ratelimit-remaining')).toBe(String(300 - 32));
  });

  test('does not apply the per-user bulk limit to ordinary routes', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    const res = await t.request('GET', '/api/v1/leads', { token: viewer.token, headers: from(freshIp()) });
    expect(res.headers.get('ratelimit-limit')).toBe('300');
  });
});

describe('MCP limit: 120 per minute per API key', () => {
  test('allows 120 calls per key, refuses the 121st in JSON-RPC form, and leaves the REST budget alone', async ({
    t,
    org,
  }) => {
    const ip = freshIp();
    const { token } = await t.createPat(org.orgId, org.ownerId, ['mcp:read']);
    const call = (key: string) =>
      t.request('POST', '/mcp', {
        token: key,
        headers: from(ip, {
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        }),
        body: { jsonrpc: '2.0', id: 1, method: 'ping' },
      });
    const responses = await repeat(120, () => call(token));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(responses[119]?.headers.get('ratelimit-limit')).toBe('120');
    expect(responses[119]?.headers.get('ratelimit-remaining')).toBe('0');

    const refused = await call(token);
    expect(refused.status).toBe(429);
    const body = await json(refused);
    expect(body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    expect(refused.headers.get('retry-after')).not.toBeNull();

    // Another key of the same user from the same address has its own budget.
    const second = await t.createPat(org.orgId, org.ownerId, ['mcp:read']);
    expect((await call(second.token)).status).toBe(200);
    // MCP calls count only toward the per-key limit, not the 300 per IP.
    const rest = await t.request('GET', '/api/v1/me', { token: org.token, headers: from(ip) });
    expect(rest.headers.get('ratelimit-remaining')).toBe('299');
  });
});

describe('limits by name', () => {
  test('messaging allows 30 per user and ingest 60 per IP', async () => {
    const limits = new RateLimits(undefined, `test:${Date.now()}`);
    for (const [name, points] of [
      ['messaging', 30],
      ['ingest', 60],
    ] as const) {
      for (let i = 0; i < points; i++) expect((await limits.consume(name, 'k')).allowed).toBe(true);
      const refused = await limits.consume(name, 'k');
      expect(refused).toMatchObject({ allowed: false, limit: points, remaining: 0 });
      expect((await limits.consume(name, 'other')).allowed).toBe(true);
    }
  });

  test("counts a limit an area declares like the kernel's, and refuses an area limit named as a kernel one", async () => {
    const limits = new RateLimits(undefined, `test:${Date.now()}`);
    const rule = { name: 'area_probe', points: 2, duration: 60, message: 'Too many probes.' };
    expect((await limits.consumeRule(rule, 'ip:1')).allowed).toBe(true);
    expect((await limits.consumeRule(rule, 'ip:1')).allowed).toBe(true);
    const third = await limits.consumeRule(rule, 'ip:1');
    expect(third).toMatchObject({
      name: 'area_probe',
      message: 'Too many probes.',
      allowed: false,
      limit: 2,
    });
    expect((await limits.consumeRule(rule, 'ip:2')).allowed).toBe(true);
    await expect(limits.consumeRule({ ...rule, name: 'global' }, 'ip:1')).rejects.toThrow(/kernel's/);
  });

  test('reports a refused limit first, otherwise the one with the smallest share left', () => {
    const o = (
      name: LimitOutcome['name'],
      limit: number,
      remaining: number,
      allowed = true,
    ): LimitOutcome => ({
      name,
      message: `${name} spent`,
      limit,
      remaining,
      allowed,
      resetSeconds: 30,
    });
    expect(mostConstrained([o('global', 300, 290), o('bulk', 60, 50)])?.name).toBe('bulk');
    expect(mostConstrained([o('global', 300, 10), o('bulk', 60, 50)])?.name).toBe('global');
    expect(mostConstrained([o('global', 300, 0, false), o('auth', 10, 1)])?.name).toBe('global');
    expect(mostConstrained([])).toBeUndefined();
  });
});

describe('client address', () => {
  test('believes X-Forwarded-For only for the trusted hop count', () => {
    expect(clientIp('10.0.0.9', '198.51.100.1', 0)).toBe('10.0.0.9');
    expect(clientIp('10.0.0.9', '198.51.100.1', 1)).toBe('198.51.100.1');
    // A client that forges entries on the left gains nothing.
    expect(clientIp('10.0.0.9', '1.1.1.1, 198.51.100.1', 1)).toBe('198.51.100.1');
    expect(clientIp('10.0.0.9', '1.1.1.1, 198.51.100.1, 10.0.0.8', 2)).toBe('198.51.100.1');
    expect(clientIp('10.0.0.9', '198.51.100.1', 5)).toBe('198.51.100.1');
    expect(clientIp('::ffff:127.0.0.1', undefined, 0)).toBe('127.0.0.1');
    expect(normalizeIp('2001:DB8::1')).toBe('2001:db8::1');
  });

  test('counts by socket address on a real server when TRUST_PROXY is off, whatever X-Forwarded-For says', async () => {
    const ctx = await createTestContext();
    const server = serve({ fetch: ctx.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 301; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/me`, {
          headers: { 'x-forwarded-for': `198.51.100.${i % 250}` },
        });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 300).every((s) => s === 401)).toBe(true);
      expect(statuses[300]).toBe(429);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await ctx.close();
    }
  });
});
