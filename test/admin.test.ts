// Locks in the operator's admin API: its guard (404 when unset, 401 on a wrong token) and its effects on tenants.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { hashToken } from '../core/auth/tokens.ts';
import { oauthTokens } from '../core/db/schema.ts';
import { fileTest } from './fixtures/file-test.ts';
import { createTestContext, json, type TestContext } from './helpers.ts';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

const test = fileTest({ env: { CRM_ADMIN_TOKEN: ADMIN_TOKEN } });
let seq = 0;

function admin(t: TestContext, method: string, path: string, body?: unknown) {
  return t.request(method, path, { token: ADMIN_TOKEN, body });
}

function orgBody(overrides: Record<string, unknown> = {}) {
  seq += 1;
  return {
    name: `Tenant ${seq}`,
    plan: 'starter',
    owner: {
      name: 'Olive Owner',
      email: `olive-${seq}-${Date.now()}@example.test`,
      password: 'long enough pw',
    },
    ...overrides,
  };
}

interface Created {
  organization: { _id: string; plan: string; status: string; disabled_features: string[] };
  user: { _id: string; role: string; organization_id: string };
}

async function createOrg(
  t: TestContext,
  overrides: Record<string, unknown> = {},
): Promise<Created & { email: string }> {
  const body = orgBody(overrides);
  const res = await admin(t, 'POST', '/admin/v1/organizations', body);
  expect(res.status).toBe(201);
  return { ...(await json<Created>(res)), email: body.owner.email };
}

describe('the admin guard', () => {
  test('answers the 404 envelope on every /admin path when CRM_ADMIN_TOKEN is unset', async () => {
    const off = await createTestContext();
    try {
      for (const [method, path] of [
        ['POST', '/admin/v1/organizations'],
        ['GET', '/admin/v1/organizations/0123456789abcdef01234567'],
        ['POST', '/admin/v1/oauth-tokens'],
      ] as const) {
        const res = await off.request(method, path, {
          token: ADMIN_TOKEN,
          ...(method === 'POST' ? { body: orgBody() } : {}),
        });
        expect(res.status).toBe(404);
        expect(await json(res)).toMatchObject({ error: 'Not found', code: 'route_not_found' });
      }
    } finally {
      await off.close();
    }
  });

  test('answers 401 Authentication required without a bearer token', async ({ t }) => {
    const res = await t.request('POST', '/admin/v1/organizations', { body: orgBody() });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ error: 'Authentication required', code: 'authentication_required' });
  });

  test('answers 401 Invalid or expired token for a wrong token, and creates nothing', async ({ t }) => {
    const body = orgBody();
    const res = await t.request('POST', '/admin/v1/organizations', { token: `${ADMIN_TOKEN}x`, body });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ error: 'Invalid or expired token', code: 'invalid_token' });
    const login = await t.request('POST', '/api/v1/auth/login', {
      body: { email: body.owner.email, password: body.owner.password },
    });
    expect(login.status).toBe(401);
  });

  test('does not accept a tenant session as an admin token', async ({ t }) => {
    const org = await t.createOrg();
    const res = await t.request('GET', `/admin/v1/organizations/${org.orgId}`, { token: org.token });
    expect(res.status).toBe(401);
  });
});

describe('organizations', () => {
  test('creates an organization with its owner, who can log in', async ({ t }) => {
    const created = await createOrg(t, { plan: 'pro' });
    expect(created.organization).toMatchObject({ plan: 'pro', status: 'active', disabled_features: [] });
    expect(created.user).toMatchObject({ role: 'owner', organization_id: created.organization._id });
    const login = await t.request('POST', '/api/v1/auth/login', {
      body: { email: created.email, password: 'long enough pw' },
    });
    expect(login.status).toBe(200);
  });

  test('validates the body with field details', async ({ t }) => {
    const res = await admin(t, 'POST', '/admin/v1/organizations', {
      name: 'X',
      plan: 'gold',
      owner: { name: 'O', email: 'nope', password: 'pw' },
    });
    expect(res.status).toBe(400);
    const body = await json<{ details: { field: string }[] }>(res);
    expect(body.details.map((d) => d.field)).toEqual(
      expect.arrayContaining(['plan', 'owner.email', 'owner.password']),
    );
  });

  test('answers 409 when the owner email is taken', async ({ t }) => {
    const first = await createOrg(t);
    const res = await admin(t, 'POST', '/admin/v1/organizations', {
      ...orgBody(),
      owner: { name: 'Dup', email: first.email, password: 'long enough pw' },
    });
    expect(res.status).toBe(409);
  });

  test('shows an organization; unknown id 404, malformed id 400', async ({ t }) => {
    const created = await createOrg(t);
    const res = await admin(t, 'GET', `/admin/v1/organizations/${created.organization._id}`);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ organization: created.organization });
    expect((await admin(t, 'GET', '/admin/v1/organizations/0123456789abcdef01234567')).status).toBe(404);
    const bad = await admin(t, 'GET', '/admin/v1/organizations/not-an-id');
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ code: 'validation_failed', details: [{ field: 'id' }] });
  });

  test('a plan change and disabled features take effect on GET /api/v1/me', async ({ t }) => {
    const org = await t.createOrg({ plan: 'free' });
    const before = await json<{ features: string[] }>(
      await t.request('GET', '/api/v1/me', { token: org.token }),
    );
    expect(before.features).toEqual([]);

    const res = await admin(t, 'PATCH', `/admin/v1/organizations/${org.orgId}`, {
      plan: 'starter',
      disabled_features: ['smart_views'],
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      organization: { _id: org.orgId, plan: 'starter', disabled_features: ['smart_views'] },
    });

    const after = await t.request('GET', '/api/v1/me', { token: org.token });
    expect(await json(after)).toMatchObject({
      organization: { plan: 'starter' },
      features: ['webhooks', 'task_snooze'],
    });
  });

  test('suspending an organization gives its PAT 403, and reactivating restores it', async ({ t }) => {
    const org = await t.createOrg();
    const { token } = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await t.request('GET', '/api/v1/me', { token })).status).toBe(200);

    const res = await admin(t, 'PATCH', `/admin/v1/organizations/${org.orgId}`, { status: 'suspended' });
    expect(res.status).toBe(200);
    const suspended = await t.request('GET', '/api/v1/me', { token });
    expect(suspended.status).toBe(403);
    expect(await json(suspended)).toMatchObject({ error: 'Organization is inactive' });

    await admin(t, 'PATCH', `/admin/v1/organizations/${org.orgId}`, { status: 'active' });
    expect((await t.request('GET', '/api/v1/me', { token })).status).toBe(200);
  });

  test('rejects an empty change, unknown features, unknown keys and bad statuses', async ({ t }) => {
    const org = await t.createOrg();
    const path = `/admin/v1/organizations/${org.orgId}`;
    for (const body of [{}, { disabled_features: ['teleport'] }, { colour: 'red' }, { status: 'paused' }]) {
      const res = await admin(t, 'PATCH', path, body);
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ code: 'validation_failed' });
    }
  });

  test('PATCH of an unknown id is 404, of a malformed id 400', async ({ t }) => {
    expect(
      (await admin(t, 'PATCH', '/admin/v1/organizations/0123456789abcdef01234567', { plan: 'pro' })).status,
    ).toBe(404);
    expect((await admin(t, 'PATCH', '/admin/v1/organizations/xyz', { plan: 'pro' })).status).toBe(400);
  });
});

describe('OAuth tokens', () => {
  test('issues a 64-hex token that authenticates as the user, stores only its hash, and revokes it', async ({
    t,
  }) => {
    const org = await t.createOrg();
    const res = await admin(t, 'POST', '/admin/v1/oauth-tokens', {
      user_id: org.ownerId,
      app_name: 'Calendar sync',
      scopes: ['read:leads', 'mcp:read'],
      expires_in_seconds: 3600,
    });
    expect(res.status).toBe(201);
    const out = await json<{
      oauth_token: Record<string, unknown> & { _id: string; expires_at: string };
      token: string;
    }>(res);
    expect(out.token).toMatch(/^[0-9a-f]{64}$/);
    expect(out.oauth_token).toMatchObject({
      app_name: 'Calendar sync',
      user_id: org.ownerId,
      organization_id: org.orgId,
      scopes: ['read:leads', 'mcp:read'],
    });
    const ttl = Date.parse(out.oauth_token.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(3500_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);

    const [row] = await t.services.db.system
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.id, out.oauth_token._id));
    expect(row?.tokenHash).toBe(hashToken(out.token));

    const me = await t.request('GET', '/api/v1/me', { token: out.token });
    expect(me.status).toBe(200);
    expect(await json(me)).toMatchObject({ token_kind: 'oauth', user: { _id: org.ownerId } });

    const del = await admin(t, 'DELETE', `/admin/v1/oauth-tokens/${out.oauth_token._id}`);
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ message: 'OAuth token revoked' });
    const after = await t.request('GET', '/api/v1/me', { token: out.token });
    expect(after.status).toBe(401);
    expect(await json(after)).toMatchObject({ error: 'Invalid or expired token' });
  });

  test('a token without expires_in_seconds does not expire', async ({ t }) => {
    const org = await t.createOrg();
    const res = await admin(t, 'POST', '/admin/v1/oauth-tokens', {
      user_id: org.ownerId,
      app_name: 'Forever app',
      scopes: ['read:leads'],
    });
    expect(res.status).toBe(201);
    expect(await json(res)).toMatchObject({ oauth_token: { expires_at: null } });
  });

  test('validates the body and the user', async ({ t }) => {
    const org = await t.createOrg();
    const invalid = await admin(t, 'POST', '/admin/v1/oauth-tokens', {
      user_id: 'bad',
      app_name: '',
      scopes: [],
      expires_in_seconds: 1.5,
    });
    expect(invalid.status).toBe(400);
    const body = await json<{ details: { field: string }[] }>(invalid);
    expect(body.details.map((d) => d.field)).toEqual(
      expect.arrayContaining(['user_id', 'app_name', 'scopes', 'expires_in_seconds']),
    );
    const tooMany = await admin(t, 'POST', '/admin/v1/oauth-tokens', {
      user_id: org.ownerId,
      app_name: 'x'.repeat(101),
      scopes: Array.from({ length: 51 }, (_, i) => `s${i}`),
    });
    expect(tooMany.status).toBe(400);
    const unknownUser = await admin(t, 'POST', '/admin/v1/oauth-tokens', {
      user_id: '0123456789abcdef01234567',
      app_name: 'A',
      scopes: ['read:leads'],
    });
    expect(unknownUser.status).toBe(404);
  });

  test('revoking an unknown token is 404, a malformed id 400', async ({ t }) => {
    expect((await admin(t, 'DELETE', '/admin/v1/oauth-tokens/0123456789abcdef01234567')).status).toBe(404);
    expect((await admin(t, 'DELETE', '/admin/v1/oauth-tokens/nope')).status).toBe(400);
  });
});
