// Locks in the public auth routes: signup, login and refresh-token rotation with reuse detection.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { SESSION_TTL_SECONDS } from '../core/auth/jwt.ts';
import { hashToken } from '../core/auth/tokens.ts';
import { organizations, refreshTokens, users } from '../core/db/schema.ts';
import { fileTest } from './fixtures/file-test.ts';
import { createTestContext, json, type TestContext } from './helpers.ts';

// Dozens of auth requests from one in-process address: the 10/min auth limiter is tested elsewhere.
const test = fileTest({ env: { DEFAULT_PLAN: 'starter' }, options: { withoutRateLimits: true } });
let seq = 0;

const PASSWORD = 'correct horse battery';

function signupBody(overrides: Record<string, unknown> = {}) {
  seq += 1;
  return {
    organization_name: `Acme ${seq}`,
    name: 'Ada Owner',
    email: `ada-${seq}-${Date.now()}@example.test`,
    password: PASSWORD,
    ...overrides,
  };
}

interface Session {
  token: string;
  refresh_token: string;
  expires_in: number;
}

async function signup(t: TestContext, overrides: Record<string, unknown> = {}) {
  const body = signupBody(overrides);
  const res = await t.request('POST', '/api/v1/auth/signup', { body });
  expect(res.status).toBe(201);
  const out = await json<Session & { organization: { _id: string }; user: { _id: string } }>(res);
  return { ...out, email: body.email };
}

async function refresh(t: TestContext, refreshToken: string) {
  return t.request('POST', '/api/v1/auth/refresh', { body: { refresh_token: refreshToken } });
}

describe('POST /api/v1/auth/signup', () => {
  test('creates an organization on DEFAULT_PLAN with the caller as owner, and a working session', async ({
    t,
  }) => {
    const body = signupBody({ email: `  Mixed.Case-${Date.now()}@Example.TEST ` });
    const res = await t.request('POST', '/api/v1/auth/signup', { body });
    expect(res.status).toBe(201);
    const out = await json<
      Session & { organization: Record<string, unknown>; user: Record<string, unknown> }
    >(res);
    expect(out.organization).toMatchObject({
      name: body.organization_name,
      plan: 'starter',
      status: 'active',
    });
    expect(out.user).toMatchObject({
      role: 'owner',
      name: 'Ada Owner',
      email: String(body.email).trim().toLowerCase(),
      organization_id: out.organization._id,
    });
    expect(out.user).not.toHaveProperty('password_hash');
    expect(out.expires_in).toBe(SESSION_TTL_SECONDS);
    expect(out.refresh_token).toMatch(/^rt_/);

    const me = await t.request('GET', '/api/v1/me', { token: out.token });
    expect(me.status).toBe(200);
    expect(await json(me)).toMatchObject({
      organization: { _id: out.organization._id, plan: 'starter' },
      user: { _id: out.user._id, role: 'owner' },
      token_kind: 'session',
    });
  });

  test('stores only a hash of the refresh token', async ({ t }) => {
    const s = await signup(t);
    const rows = await t.services.db.system
      .select()
      .from(refreshTokens)
      .where(eq(refreshTokens.userId, s.user._id));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.tokenHash).toBe(hashToken(s.refresh_token));
    expect(rows[0]?.tokenHash).not.toContain(s.refresh_token);
  });

  test('answers 409 for an email already in use, whatever its case', async ({ t }) => {
    const first = await signup(t);
    const res = await t.request('POST', '/api/v1/auth/signup', {
      body: signupBody({ email: first.email.toUpperCase() }),
    });
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ error: 'Conflict', details: [{ field: 'email' }] });
  });

  test('answers 400 with field details for an invalid body', async ({ t }) => {
    const res = await t.request('POST', '/api/v1/auth/signup', {
      body: { organization_name: '', name: 'A', email: 'not-an-email', password: 'short', extra: 1 },
    });
    expect(res.status).toBe(400);
    const out = await json<{ error: string; code: string; details: { field: string; code: string }[] }>(res);
    expect(out).toMatchObject({ error: 'Validation failed', code: 'validation_failed' });
    const fields = out.details.map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['organization_name', 'email', 'password']));
    expect(out.details.some((d) => d.code === 'unrecognized_keys')).toBe(true);
  });

  test('answers 400 for malformed JSON', async ({ t }) => {
    const res = await t.request('POST', '/api/v1/auth/signup', { body: '{"organization_name":' });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'invalid_json' });
  });
});

describe('signup disabled', () => {
  test('answers 403 when SIGNUP_ENABLED=false and creates nothing', async () => {
    const closed = await createTestContext({ SIGNUP_ENABLED: 'false' }, { withoutRateLimits: true });
    try {
      const res = await closed.request('POST', '/api/v1/auth/signup', { body: signupBody() });
      expect(res.status).toBe(403);
      expect(await json(res)).toMatchObject({ error: 'Signup is disabled', code: 'signup_disabled' });
      const orgs = await closed.services.db.system.select().from(organizations);
      expect(orgs).toHaveLength(0);
    } finally {
      await closed.close();
    }
  });
});

describe('POST /api/v1/auth/login', () => {
  test('returns a session and the user for the right password', async ({ t }) => {
    const s = await signup(t);
    const res = await t.request('POST', '/api/v1/auth/login', {
      body: { email: s.email.toUpperCase(), password: PASSWORD },
    });
    expect(res.status).toBe(200);
    const out = await json<Session & { user: { _id: string } }>(res);
    expect(out.user._id).toBe(s.user._id);
    expect(out.expires_in).toBe(SESSION_TTL_SECONDS);
    const me = await t.request('GET', '/api/v1/me', { token: out.token });
    expect(me.status).toBe(200);
    // A login starts its own refresh family, independent of the signup's.
    expect(out.refresh_token).not.toBe(s.refresh_token);
    expect((await refresh(t, out.refresh_token)).status).toBe(200);
  });

  test('answers 401 "Invalid email or password" for a wrong password', async ({ t }) => {
    const s = await signup(t);
    const res = await t.request('POST', '/api/v1/auth/login', {
      body: { email: s.email, password: 'wrong password' },
    });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ error: 'Invalid email or password', code: 'invalid_credentials' });
  });

  test('answers the same 401 for an unknown email', async ({ t }) => {
    const res = await t.request('POST', '/api/v1/auth/login', {
      body: { email: 'nobody-here@example.test', password: PASSWORD },
    });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ error: 'Invalid email or password', code: 'invalid_credentials' });
  });

  test('answers the same 401 for a deactivated user with the right password', async ({ t }) => {
    const s = await signup(t);
    await t.services.db.system
      .update(users)
      .set({ status: 'deactivated', deactivatedAt: new Date() })
      .where(eq(users.id, s.user._id));
    const res = await t.request('POST', '/api/v1/auth/login', {
      body: { email: s.email, password: PASSWORD },
    });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ error: 'Invalid email or password', code: 'invalid_credentials' });
  });

  test('answers 403 "Organization is inactive" for a suspended organization', async ({ t }) => {
    const s = await signup(t);
    await t.services.db.system
      .update(organizations)
      .set({ status: 'suspended' })
      .where(eq(organizations.id, s.organization._id));
    const res = await t.request('POST', '/api/v1/auth/login', {
      body: { email: s.email, password: PASSWORD },
    });
    expect(res.status).toBe(403);
    expect(await json(res)).toMatchObject({ error: 'Organization is inactive' });
  });

  test('answers 400 with details when fields are missing', async ({ t }) => {
    const res = await t.request('POST', '/api/v1/auth/login', { body: { email: 'a@example.test' } });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'validation_failed', details: [{ field: 'password' }] });
  });
});

describe('POST /api/v1/auth/refresh', () => {
  test('rotates: the new pair works, the session is valid, the refresh token is single-use', async ({
    t,
  }) => {
    const s = await signup(t);
    const res = await refresh(t, s.refresh_token);
    expect(res.status).toBe(200);
    const next = await json<Session>(res);
    expect(Object.keys(next).sort()).toEqual(['expires_in', 'refresh_token', 'token']);
    expect(next.refresh_token).not.toBe(s.refresh_token);
    expect(next.expires_in).toBe(SESSION_TTL_SECONDS);
    const me = await t.request('GET', '/api/v1/me', { token: next.token });
    expect(me.status).toBe(200);
    expect(await json(me)).toMatchObject({ user: { _id: s.user._id } });

    const rows = await t.services.db.system
      .select()
      .from(refreshTokens)
      .where(eq(refreshTokens.userId, s.user._id));
    expect(rows).toHaveLength(2);
    const old = rows.find((r) => r.tokenHash === hashToken(s.refresh_token));
    const fresh = rows.find((r) => r.tokenHash === hashToken(next.refresh_token));
    expect(old?.rotatedAt).toBeInstanceOf(Date);
    expect(fresh?.rotatedAt).toBeNull();
    expect(fresh?.familyId).toBe(old?.familyId);

    // The newest token keeps rotating.
    const third = await refresh(t, next.refresh_token);
    expect(third.status).toBe(200);
  });

  test('revokes the whole family when a rotated token is presented again', async ({ t }) => {
    const s = await signup(t);
    const second = await json<Session>(await refresh(t, s.refresh_token));

    const reuse = await refresh(t, s.refresh_token);
    expect(reuse.status).toBe(401);
    expect(await json(reuse)).toEqual({
      error: 'Invalid or expired refresh token',
      code: 'invalid_refresh_token',
    });
    // The legitimate-looking newest token of the family is refused too.
    const newest = await refresh(t, second.refresh_token);
    expect(newest.status).toBe(401);
    expect(await json(newest)).toMatchObject({ code: 'invalid_refresh_token' });

    const rows = await t.services.db.system
      .select()
      .from(refreshTokens)
      .where(eq(refreshTokens.userId, s.user._id));
    expect(rows.length).toBe(2);
    expect(rows.every((r) => r.revokedAt !== null)).toBe(true);
  });

  test('lets only one of two concurrent refreshes with the same token succeed', async ({ t }) => {
    const s = await signup(t);
    const results = await Promise.all([refresh(t, s.refresh_token), refresh(t, s.refresh_token)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    // The loser counts as reuse, so the winner's new token is revoked with its family.
    const winner = results.find((r) => r.status === 200);
    const next = await json<Session>(winner ?? new Response('{}'));
    expect((await refresh(t, next.refresh_token)).status).toBe(401);
  });

  test('leaves other families alone when one is revoked', async ({ t }) => {
    const s = await signup(t);
    const login = await json<Session>(
      await t.request('POST', '/api/v1/auth/login', { body: { email: s.email, password: PASSWORD } }),
    );
    await refresh(t, s.refresh_token);
    expect((await refresh(t, s.refresh_token)).status).toBe(401);
    expect((await refresh(t, login.refresh_token)).status).toBe(200);
  });

  test('answers 401 for an unknown or an expired refresh token', async ({ t }) => {
    expect((await refresh(t, 'rt_not-a-real-token')).status).toBe(401);

    const s = await signup(t);
    await t.services.db.system
      .update(refreshTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(refreshTokens.tokenHash, hashToken(s.refresh_token)));
    const res = await refresh(t, s.refresh_token);
    expect(res.status).toBe(401);
    expect(await json(res)).toMatchObject({ code: 'invalid_refresh_token' });
  });

  test('answers 401 for a deactivated user and 403 for an inactive organization', async ({ t }) => {
    const a = await signup(t);
    await t.services.db.system.update(users).set({ status: 'deactivated' }).where(eq(users.id, a.user._id));
    const deactivated = await refresh(t, a.refresh_token);
    expect(deactivated.status).toBe(401);
    expect(await json(deactivated)).toMatchObject({ code: 'invalid_refresh_token' });

    const b = await signup(t);
    await t.services.db.system
      .update(organizations)
      .set({ status: 'inactive' })
      .where(eq(organizations.id, b.organization._id));
    const inactive = await refresh(t, b.refresh_token);
    expect(inactive.status).toBe(403);
    expect(await json(inactive)).toMatchObject({ error: 'Organization is inactive' });
  });

  test('answers 400 with details for a missing refresh_token', async ({ t }) => {
    const res = await t.request('POST', '/api/v1/auth/refresh', { body: {} });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'refresh_token' }],
    });
  });
});
