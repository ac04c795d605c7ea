// Locks in the password reset's request limits: both API routes share the auth limiter (10 a minute per IP, the 11th a 429 with its sentence and RateLimit-* headers) and stack on the global one, without spending the public pages' budget, which the /reset-password page keeps.
import { describe, expect } from 'vitest';
import { fileTest, readError } from '../fixtures/index.ts';

const test = fileTest({ env: { TRUST_PROXY: '1' } });
let ipSeq = 0;
/** A fresh client address per scenario (TRUST_PROXY=1 makes X-Forwarded-For the client). */
const freshIp = () => `198.51.100.${++ipSeq}`;

describe('the password reset under the auth limiter', () => {
  test('allows 10 requests a minute from one address over both routes, refuses the 11th, reports the auth limit', async ({
    t,
    org,
  }) => {
    const ip = freshIp();
    const headers = { 'x-forwarded-for': ip };
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res =
        i % 2 === 0
          ? await t.request('POST', '/api/v1/auth/password-reset', {
              headers,
              body: { email: `a${i}@example.test` },
            })
          : await t.request('POST', '/api/v1/auth/password-reset/confirm', {
              headers,
              body: { token: 'unknown', password: 'long enough secret' },
            });
      statuses.push(res.status);
      expect(res.headers.get('ratelimit-limit')).toBe('10');
      expect(res.headers.get('ratelimit-remaining')).toBe(String(9 - i));
    }
    expect(statuses).toEqual([202, 400, 202, 400, 202, 400, 202, 400, 202, 400]);

    const refused = await t.request('POST', '/api/v1/auth/password-reset', {
      headers,
      body: { email: 'a@example.test' },
    });
    const body = await readError(refused, 429);
    expect(body).toMatchObject({ error: 'Too many authentication attempts, please try again later.' });
    expect(refused.headers.get('ratelimit-limit')).toBe('10');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Login shares the budget.
    const login = await t.request('POST', '/api/v1/auth/login', {
      headers,
      body: { email: 'a@example.test', password: 'whatever it is' },
    });
    expect(login.status).toBe(429);

    // The 11 requests counted against the global limit too (stacking), and nothing of the pages' 60.
    const me = await t.request('GET', '/api/v1/me', { token: org.token, headers });
    expect(me.status).toBe(200);
    expect(me.headers.get('ratelimit-limit')).toBe('300');
    expect(me.headers.get('ratelimit-remaining')).toBe(String(300 - 13));
    const page = await t.request('GET', '/reset-password?token=unknown', { headers });
    expect(page.status).toBe(404);
    expect(page.headers.get('ratelimit-limit')).toBe('60');
    expect(page.headers.get('ratelimit-remaining')).toBe('59');
  });

  test('keeps the page on the public pages budget, not the auth limiter', async ({ t }) => {
    const headers = { 'x-forwarded-for': freshIp() };
    for (let i = 0; i < 12; i++) {
      const page = await t.request('GET', '/reset-password?token=unknown', { headers });
      expect(page.status).toBe(404);
    }
    const api = await t.request('POST', '/api/v1/auth/password-reset', {
      headers,
      body: { email: 'b@example.test' },
    });
    expect(api.status).toBe(202);
    expect(api.headers.get('ratelimit-remaining')).toBe('9');
  });
});
