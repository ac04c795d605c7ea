// Locks in the verified-credential cache: hot callers are served from it, and every change to what authentication would answer shows on the very next request.
import { describe, expect } from 'vitest';
import { authenticate } from '../core/auth/authenticate.ts';
import { CredentialCache } from '../core/auth/cache.ts';
import type { AuthContext } from '../core/auth-context.ts';
import type { NotificationHandlers, NotificationSource } from '../core/db/notifications.ts';
import { createLogger } from '../core/logger.ts';
import { fileTest, onPostgres, TEST_DATABASE_URL, type TestContext } from './fixtures/index.ts';
import { json } from './helpers.ts';

const ADMIN_TOKEN = 'admin-token-for-cache-tests-0123';
// write:settings lets a key reach the API-key routes, where a refused cross-tenant change is tried.
const SCOPES = ['read:leads', 'write:leads', 'write:settings'];

// On PostgreSQL the context gets REDIS_URL, so this file covers redis mode there (notify mode, without
// Redis, is test/services/auth-cache-notify.test.ts); the request limits stay off so no other file's
// counters mix in.
const REDIS_URL = process.env.TEST_REDIS_URL;
// Each test changes its organization (suspends it, changes its plan): `cacheOrg` is a new one per test
// (a fixture without a scope is built for each test that names it).
const test = fileTest({
  env: { CRM_ADMIN_TOKEN: ADMIN_TOKEN, ...(onPostgres && REDIS_URL ? { REDIS_URL } : {}) },
  options: { withoutRateLimits: true },
}).extend('cacheOrg', async ({ t }) => t.createOrg({ name: 'Cache Org' }));

function request(
  t: TestContext,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<Response> {
  return t.request(method, path, { token, body });
}

/** Two requests: the first fills the cache, the second must be served from it. */
async function warm(t: TestContext, token: string, expected = 200): Promise<void> {
  expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(expected);
  const hits = t.services.authCache.stats.hits;
  expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(expected);
  expect(t.services.authCache.stats.hits).toBe(hits + 1);
}

function admin(t: TestContext, method: string, path: string, body?: unknown): Promise<Response> {
  return request(t, method, path, ADMIN_TOKEN, body);
}

describe('verified-credential cache', () => {
  test('caches on both backends (local on PGlite, Redis-checked on PostgreSQL)', ({ t }) => {
    expect(t.services.authCache.mode).toBe(TEST_DATABASE_URL ? 'redis' : 'local');
  });

  test('serves a PAT and a session from memory after the first request', async ({ t, cacheOrg }) => {
    const { token } = await t.createPat(cacheOrg.orgId, cacheOrg.ownerId, SCOPES);
    await warm(t, token);
    await warm(t, cacheOrg.token);
  });

  test('refuses a revoked key on the very next request', async ({ t, cacheOrg }) => {
    const { token, keyId } = await t.createPat(cacheOrg.orgId, cacheOrg.ownerId, SCOPES);
    await warm(t, token);
    expect((await request(t, 'DELETE', `/api/v1/settings/api-keys/${keyId}`, cacheOrg.token)).status).toBe(
      200,
    );
    expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(401);
  });

  test('refuses the old token of a rotated key on the very next request, and accepts the new one', async ({
    t,
    cacheOrg,
  }) => {
    const { token, keyId } = await t.createPat(cacheOrg.orgId, cacheOrg.ownerId, SCOPES);
    await warm(t, token);
    const res = await request(t, 'POST', `/api/v1/settings/api-keys/${keyId}/rotate`, cacheOrg.token);
    expect(res.status).toBe(201);
    const { plain_token: fresh } = await json<{ plain_token: string }>(res);
    expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(401);
    expect((await request(t, 'GET', '/api/v1/me', fresh)).status).toBe(200);
  });

  test("refuses a deactivated user's key and session at once, and accepts them after reactivation", async ({
    t,
    cacheOrg,
  }) => {
    const member = await t.createUser(cacheOrg.orgId, 'member');
    const { token } = await t.createPat(cacheOrg.orgId, member.userId, SCOPES);
    await warm(t, token);
    await warm(t, member.token);
    expect(
      (await request(t, 'POST', `/api/v1/users/${member.userId}/deactivate`, cacheOrg.token)).status,
    ).toBe(200);
    expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(401);
    expect((await request(t, 'GET', '/api/v1/me', member.token)).status).toBe(401);
    expect(
      (await request(t, 'POST', `/api/v1/users/${member.userId}/reactivate`, cacheOrg.token)).status,
    ).toBe(200);
    expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(200);
  });

  test("refuses a deleted user's key and session at once", async ({ t, cacheOrg }) => {
    const member = await t.createUser(cacheOrg.orgId, 'member');
    const { token } = await t.createPat(cacheOrg.orgId, member.userId, SCOPES);
    await warm(t, token);
    await warm(t, member.token);
    expect((await request(t, 'DELETE', `/api/v1/users/${member.userId}`, cacheOrg.token)).status).toBe(200);
    expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(401);
    expect((await request(t, 'GET', '/api/v1/me', member.token)).status).toBe(401);
  });

  test('answers 403 on the very next request after the admin API suspends the organization', async ({
    t,
    cacheOrg,
  }) => {
    const { token } = await t.createPat(cacheOrg.orgId, cacheOrg.ownerId, SCOPES);
    await warm(t, token);
    await warm(t, cacheOrg.token);
    const res = await admin(t, 'PATCH', `/admin/v1/organizations/${cacheOrg.orgId}`, { status: 'suspended' });
    expect(res.status).toBe(200);
    for (const credential of [token, cacheOrg.token]) {
      const next = await request(t, 'GET', '/api/v1/me', credential);
      expect(next.status).toBe(403);
      expect(await json(next)).toMatchObject({ error: 'Organization is inactive' });
    }
    await admin(t, 'PATCH', `/admin/v1/organizations/${cacheOrg.orgId}`, { status: 'active' });
    expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(200);
  });

  test('shows a plan change and disabled features on the very next request', async ({ t, cacheOrg }) => {
    const { token } = await t.createPat(cacheOrg.orgId, cacheOrg.ownerId, SCOPES);
    await warm(t, token);
    expect((await authenticate(`Bearer ${token}`, t.services)).plan).toBe('free');
    const res = await admin(t, 'PATCH', `/admin/v1/organizations/${cacheOrg.orgId}`, {
      plan: 'pro',
      disabled_features: ['webhooks'],
    });
    expect(res.status).toBe(200);
    const me = await request(t, 'GET', '/api/v1/me', token);
    expect(await json(me)).toMatchObject({ organization: { plan: 'pro' } });
    // The access checks read the authenticated context, so it must have been refreshed too.
    const auth = await authenticate(`Bearer ${token}`, t.services);
    expect(auth.plan).toBe('pro');
    expect(auth.disabledFeatures).toEqual(['webhooks']);
  });

  test("applies a role change to the user's next request", async ({ t, cacheOrg }) => {
    const member = await t.createUser(cacheOrg.orgId, 'member');
    const { token } = await t.createPat(cacheOrg.orgId, member.userId, SCOPES);
    await warm(t, token);
    expect((await request(t, 'POST', '/api/v1/leads', token, { name: 'Before' })).status).toBe(201);
    const res = await request(t, 'PUT', `/api/v1/users/${member.userId}`, cacheOrg.token, { role: 'viewer' });
    expect(res.status).toBe(200);
    const denied = await request(t, 'POST', '/api/v1/leads', token, { name: 'After' });
    expect(denied.status).toBe(403);
    expect(await json(denied)).toMatchObject({ required_permission: 'leads.create' });
  });

  test('refuses an OAuth token on the very next request after the admin API revokes it', async ({
    t,
    cacheOrg,
  }) => {
    const issued = await admin(t, 'POST', '/admin/v1/oauth-tokens', {
      user_id: cacheOrg.ownerId,
      app_name: 'Cache test app',
      scopes: SCOPES,
    });
    expect(issued.status).toBe(201);
    const { token, oauth_token } = await json<{ token: string; oauth_token: { _id: string } }>(issued);
    await warm(t, token);
    expect((await admin(t, 'DELETE', `/admin/v1/oauth-tokens/${oauth_token._id}`)).status).toBe(200);
    expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(401);
  });

  test('keeps serving from memory when an attempted change was refused', async ({ t, cacheOrg }) => {
    const { token } = await t.createPat(cacheOrg.orgId, cacheOrg.ownerId, SCOPES);
    const other = await t.createOrg({ name: 'Cache Org' });
    const { keyId: foreignKey } = await t.createPat(other.orgId, other.ownerId, SCOPES);
    await warm(t, token);
    expect((await request(t, 'DELETE', `/api/v1/settings/api-keys/${foreignKey}`, token)).status).toBe(404);
    const hits = t.services.authCache.stats.hits;
    expect((await request(t, 'GET', '/api/v1/me', token)).status).toBe(200);
    expect(t.services.authCache.stats.hits).toBe(hits + 1);
  });
});

const caller: AuthContext = {
  tokenKind: 'oauth',
  orgId: 'a'.repeat(24),
  userId: 'b'.repeat(24),
  role: 'member',
  plan: 'free',
  disabledFeatures: [],
  scopes: ['read:leads'],
  credentialId: 'c'.repeat(24),
};

describe('CredentialCache in local mode', () => {
  const cache = () => new CredentialCache({ mode: 'local', logger: createLogger('silent') });

  test('does not keep what was loaded while an invalidation ran', async () => {
    const c = cache();
    // The load read the database before the change committed; its answer may be stale.
    await c.lookup('k', new Date(), async () => {
      await c.invalidate({ credentialIds: [caller.credentialId ?? ''] });
      return { auth: caller, expiresAt: null };
    });
    expect(c.size).toBe(0);
    await c.lookup('k', new Date(), async () => ({ auth: caller, expiresAt: null }));
    expect(c.size).toBe(1);
  });

  test('re-verifies a credential once it has expired, even if still cached', async () => {
    const c = cache();
    const start = new Date('2030-01-01T00:00:00Z');
    let loads = 0;
    const load = async () => {
      loads++;
      return { auth: caller, expiresAt: new Date(start.getTime() + 1000) };
    };
    await c.lookup('k', start, load);
    await c.lookup('k', new Date(start.getTime() + 500), load);
    expect(loads).toBe(1);
    await c.lookup('k', new Date(start.getTime() + 1000), load);
    expect(loads).toBe(2);
  });

  test('reloads an entry past its time to live once, serving concurrent callers meanwhile', async () => {
    const c = new CredentialCache({ mode: 'local', logger: createLogger('silent'), ttlMs: 100 });
    let loads = 0;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const load = async () => {
      loads++;
      if (loads > 1) await gate;
      return { auth: caller, expiresAt: null };
    };
    const start = new Date();
    await c.lookup('k', start, load);
    const later = new Date(start.getTime() + 150);
    const reloading = c.lookup('k', later, load);
    await c.lookup('k', later, load);
    await c.lookup('k', later, load);
    expect(loads).toBe(2);
    release();
    await reloading;
    expect(c.size).toBe(1);
  });

  test('forgets entries after its time to live', async () => {
    const c = new CredentialCache({ mode: 'local', logger: createLogger('silent'), ttlMs: 100 });
    let loads = 0;
    const load = async () => {
      loads++;
      return { auth: caller, expiresAt: null };
    };
    const start = new Date();
    await c.lookup('k', start, load);
    await c.lookup('k', new Date(start.getTime() + 99), load);
    await c.lookup('k', new Date(start.getTime() + 100), load);
    expect(loads).toBe(2);
  });
});

/** A listener the test drives: it is ready, loses its connection and delivers messages on demand. */
function fakeListener(): NotificationSource & { handlers: NotificationHandlers } {
  const source = {
    handlers: { message: () => {}, ready: () => {}, lost: () => {} } as NotificationHandlers,
    backendPid: null,
    async start(handlers: NotificationHandlers) {
      source.handlers = handlers;
    },
    async close() {},
  };
  return source;
}

describe('CredentialCache in notify mode', () => {
  const load = async () => ({ auth: caller, expiresAt: null });
  async function started() {
    const listener = fakeListener();
    const c = new CredentialCache({
      mode: 'notify',
      notifications: listener,
      logger: createLogger('silent'),
    });
    await c.start();
    return { c, listener };
  }

  test('caches nothing until its listener is ready, then serves hits', async () => {
    const { c, listener } = await started();
    await c.lookup('k', new Date(), load);
    await c.lookup('k', new Date(), load);
    expect(c.stats).toEqual({ hits: 0, misses: 2 });
    expect(c.size).toBe(0);
    listener.handlers.ready();
    await c.lookup('k', new Date(), load);
    await c.lookup('k', new Date(), load);
    expect(c.stats).toEqual({ hits: 1, misses: 3 });
  });

  test('drops what a message names, and everything on a truncation or a message it does not know', async () => {
    const { c, listener } = await started();
    listener.handlers.ready();
    const fill = async (key: string, auth: AuthContext) =>
      c.lookup(key, new Date(), async () => ({ auth, expiresAt: null }));
    await fill('k', caller);
    await fill('other', {
      ...caller,
      orgId: 'd'.repeat(24),
      userId: 'e'.repeat(24),
      credentialId: 'f'.repeat(24),
    });
    listener.handlers.message(`u:${'x'.repeat(24)}`);
    expect(c.size).toBe(2);
    listener.handlers.message(`c:${caller.credentialId}`);
    expect(c.size).toBe(1);
    await fill('k', caller);
    listener.handlers.message(`o:${caller.orgId}`);
    expect(c.size).toBe(1);
    await fill('k', caller);
    listener.handlers.message(`u:${caller.userId}`);
    expect(c.size).toBe(1);
    listener.handlers.message('*');
    expect(c.size).toBe(0);
    await fill('k', caller);
    listener.handlers.message('z:unknown');
    expect(c.size).toBe(0);
  });

  test('forgets everything and caches nothing from a lost connection until it is ready again', async () => {
    const { c, listener } = await started();
    listener.handlers.ready();
    await c.lookup('k', new Date(), load);
    listener.handlers.lost();
    expect(c.size).toBe(0);
    const { hits } = c.stats;
    await c.lookup('k', new Date(), load);
    await c.lookup('k', new Date(), load);
    expect(c.stats.hits).toBe(hits);
    expect(c.size).toBe(0);
    listener.handlers.ready();
    await c.lookup('k', new Date(), load);
    expect(c.size).toBe(1);
  });

  test('does not keep what was loaded across a lost connection, even once ready again', async () => {
    const { c, listener } = await started();
    listener.handlers.ready();
    // The load read the database while the listener was down: a change made then was never heard.
    await c.lookup('k', new Date(), async () => {
      listener.handlers.lost();
      listener.handlers.ready();
      return { auth: caller, expiresAt: null };
    });
    expect(c.size).toBe(0);
  });
});
