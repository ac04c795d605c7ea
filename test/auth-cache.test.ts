// Locks in the verified-credential cache: hot callers are served from it, and every change to what authentication would answer shows on the very next request.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServices } from '../app/services.ts';
import type { Role } from '../core/access.ts';
import { authenticate } from '../core/auth/authenticate.ts';
import { CredentialCache } from '../core/auth/cache.ts';
import { signSession } from '../core/auth/jwt.ts';
import { generatePat, hashToken, tokenPrefix } from '../core/auth/tokens.ts';
import type { AuthContext } from '../core/auth-context.ts';
import { loadConfig } from '../core/config.ts';
import { apiKeys } from '../core/db/schema.ts';
import { newId } from '../core/ids.ts';
import { createLogger } from '../core/logger.ts';
import { createOrganizationWithOwner } from '../core/organizations.ts';
import type { Services } from '../core/services.ts';
import { insertUser } from '../core/users.ts';
import { createApp } from '../http/app.ts';
import { createScratchDatabase, json, TEST_DATABASE_URL } from './helpers.ts';

const ADMIN_TOKEN = 'admin-token-for-cache-tests-0123';
// write:settings lets a key reach the API-key routes, where a refused cross-tenant change is tried.
const SCOPES = ['read:leads', 'write:leads', 'write:settings'];

let services: Services;
let app: ReturnType<typeof createApp>;
let drop: (() => Promise<void>) | undefined;

// Built by hand rather than with createTestContext: on PostgreSQL the cache needs Redis (without it
// nothing is cached), and the request limits must stay in memory so no other file's counters mix in.
beforeAll(async () => {
  const scratch = TEST_DATABASE_URL ? await createScratchDatabase(TEST_DATABASE_URL) : undefined;
  drop = scratch?.drop;
  const redisUrl = process.env.TEST_REDIS_URL;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: '/nonexistent',
    CRM_ADMIN_TOKEN: ADMIN_TOKEN,
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
    ...(scratch && redisUrl ? { REDIS_URL: redisUrl } : {}),
  });
  services = await createServices(config, {
    inMemory: true,
    withoutRateLimits: true,
    logger: createLogger('silent'),
  });
  app = createApp(services);
});
afterAll(async () => {
  await services?.close();
  await drop?.();
});

function request(method: string, path: string, token: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return Promise.resolve(
    app.request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
  );
}

let seq = 0;
async function createOrg(): Promise<{ orgId: string; ownerId: string; owner: string }> {
  const { organization, owner } = await services.db.transaction((tx) =>
    createOrganizationWithOwner(tx, {
      name: 'Cache Org',
      plan: 'free',
      owner: {
        name: 'Owner',
        email: `cache-owner-${Date.now()}-${seq++}@example.test`,
        password: 'pw-12345678',
      },
    }),
  );
  return {
    orgId: organization.id,
    ownerId: owner.id,
    owner: await signSession(services.jwtKey, { sub: owner.id, org: organization.id }),
  };
}

async function createUser(orgId: string, role: Role): Promise<{ userId: string; session: string }> {
  const user = await insertUser(services.db.system, {
    orgId,
    role,
    email: `cache-${role}-${Date.now()}-${seq++}@example.test`,
    name: `${role} user`,
    password: 'pw-12345678',
  });
  return { userId: user.id, session: await signSession(services.jwtKey, { sub: user.id, org: orgId }) };
}

async function createPat(orgId: string, userId: string): Promise<{ token: string; keyId: string }> {
  const token = generatePat();
  const keyId = newId();
  await services.db.system.insert(apiKeys).values({
    id: keyId,
    orgId,
    userId,
    label: `key ${keyId}`,
    tokenHash: hashToken(token),
    tokenPrefix: tokenPrefix(token),
    scopes: SCOPES,
  });
  return { token, keyId };
}

/** Two requests: the first fills the cache, the second must be served from it. */
async function warm(token: string, expected = 200): Promise<void> {
  expect((await request('GET', '/api/v1/me', token)).status).toBe(expected);
  const hits = services.authCache.stats.hits;
  expect((await request('GET', '/api/v1/me', token)).status).toBe(expected);
  expect(services.authCache.stats.hits).toBe(hits + 1);
}

function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return request(method, path, ADMIN_TOKEN, body);
}

let org: Awaited<ReturnType<typeof createOrg>>;
beforeEach(async () => {
  org = await createOrg();
});

describe('verified-credential cache', () => {
  it('caches on both backends (local on PGlite, Redis-checked on PostgreSQL)', () => {
    expect(services.authCache.mode).toBe(TEST_DATABASE_URL ? 'redis' : 'local');
  });

  it('serves a PAT and a session from memory after the first request', async () => {
    const { token } = await createPat(org.orgId, org.ownerId);
    await warm(token);
    await warm(org.owner);
  });

  it('refuses a revoked key on the very next request', async () => {
    const { token, keyId } = await createPat(org.orgId, org.ownerId);
    await warm(token);
    expect((await request('DELETE', `/api/v1/settings/api-keys/${keyId}`, org.owner)).status).toBe(200);
    expect((await request('GET', '/api/v1/me', token)).status).toBe(401);
  });

  it('refuses the old token of a rotated key on the very next request, and accepts the new one', async () => {
    const { token, keyId } = await createPat(org.orgId, org.ownerId);
    await warm(token);
    const res = await request('POST', `/api/v1/settings/api-keys/${keyId}/rotate`, org.owner);
    expect(res.status).toBe(201);
    const { plain_token: fresh } = await json<{ plain_token: string }>(res);
    expect((await request('GET', '/api/v1/me', token)).status).toBe(401);
    expect((await request('GET', '/api/v1/me', fresh)).status).toBe(200);
  });

  it("refuses a deactivated user's key and session at once, and accepts them after reactivation", async () => {
    const member = await createUser(org.orgId, 'member');
    const { token } = await createPat(org.orgId, member.userId);
    await warm(token);
    await warm(member.session);
    expect((await request('POST', `/api/v1/users/${member.userId}/deactivate`, org.owner)).status).toBe(200);
    expect((await request('GET', '/api/v1/me', token)).status).toBe(401);
    expect((await request('GET', '/api/v1/me', member.session)).status).toBe(401);
    expect((await request('POST', `/api/v1/users/${member.userId}/reactivate`, org.owner)).status).toBe(200);
    expect((await request('GET', '/api/v1/me', token)).status).toBe(200);
  });

  it("refuses a deleted user's key and session at once", async () => {
    const member = await createUser(org.orgId, 'member');
    const { token } = await createPat(org.orgId, member.userId);
    await warm(token);
    await warm(member.session);
    expect((await request('DELETE', `/api/v1/users/${member.userId}`, org.owner)).status).toBe(200);
    expect((await request('GET', '/api/v1/me', token)).status).toBe(401);
    expect((await request('GET', '/api/v1/me', member.session)).status).toBe(401);
  });

  it('answers 403 on the very next request after the admin API suspends the organization', async () => {
    const { token } = await createPat(org.orgId, org.ownerId);
    await warm(token);
    await warm(org.owner);
    const res = await admin('PATCH', `/admin/v1/organizations/${org.orgId}`, { status: 'suspended' });
    expect(res.status).toBe(200);
    for (const credential of [token, org.owner]) {
      const next = await request('GET', '/api/v1/me', credential);
      expect(next.status).toBe(403);
      expect(await json(next)).toMatchObject({ error: 'Organization is inactive' });
    }
    await admin('PATCH', `/admin/v1/organizations/${org.orgId}`, { status: 'active' });
    expect((await request('GET', '/api/v1/me', token)).status).toBe(200);
  });

  it('shows a plan change and disabled features on the very next request', async () => {
    const { token } = await createPat(org.orgId, org.ownerId);
    await warm(token);
    expect((await authenticate(`Bearer ${token}`, services)).plan).toBe('free');
    const res = await admin('PATCH', `/admin/v1/organizations/${org.orgId}`, {
      plan: 'pro',
      disabled_features: ['webhooks'],
    });
    expect(res.status).toBe(200);
    const me = await request('GET', '/api/v1/me', token);
    expect(await json(me)).toMatchObject({ organization: { plan: 'pro' } });
    // The access checks read the authenticated context, so it must have been refreshed too.
    const auth = await authenticate(`Bearer ${token}`, services);
    expect(auth.plan).toBe('pro');
    expect(auth.disabledFeatures).toEqual(['webhooks']);
  });

  it("applies a role change to the user's next request", async () => {
    const member = await createUser(org.orgId, 'member');
    const { token } = await createPat(org.orgId, member.userId);
    await warm(token);
    expect((await request('POST', '/api/v1/leads', token, { name: 'Before' })).status).toBe(201);
    const res = await request('PUT', `/api/v1/users/${member.userId}`, org.owner, { role: 'viewer' });
    expect(res.status).toBe(200);
    const denied = await request('POST', '/api/v1/leads', token, { name: 'After' });
    expect(denied.status).toBe(403);
    expect(await json(denied)).toMatchObject({ required_permission: 'leads.create' });
  });

  it('refuses an OAuth token on the very next request after the admin API revokes it', async () => {
    const issued = await admin('POST', '/admin/v1/oauth-tokens', {
      user_id: org.ownerId,
      app_name: 'Cache test app',
      scopes: SCOPES,
    });
    expect(issued.status).toBe(201);
    const { token, oauth_token } = await json<{ token: string; oauth_token: { _id: string } }>(issued);
    await warm(token);
    expect((await admin('DELETE', `/admin/v1/oauth-tokens/${oauth_token._id}`)).status).toBe(200);
    expect((await request('GET', '/api/v1/me', token)).status).toBe(401);
  });

  it('keeps serving from memory when an attempted change was refused', async () => {
    const { token } = await createPat(org.orgId, org.ownerId);
    const other = await createOrg();
    const { keyId: foreignKey } = await createPat(other.orgId, other.ownerId);
    await warm(token);
    expect((await request('DELETE', `/api/v1/settings/api-keys/${foreignKey}`, token)).status).toBe(404);
    const hits = services.authCache.stats.hits;
    expect((await request('GET', '/api/v1/me', token)).status).toBe(200);
    expect(services.authCache.stats.hits).toBe(hits + 1);
  });
});

describe('CredentialCache in local mode', () => {
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
  const cache = () => new CredentialCache({ mode: 'local', logger: createLogger('silent') });

  it('does not keep what was loaded while an invalidation ran', async () => {
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

  it('re-verifies a credential once it has expired, even if still cached', async () => {
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

  it('reloads an entry past its time to live once, serving concurrent callers meanwhile', async () => {
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

  it('forgets entries after its time to live', async () => {
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
