// Locks in the credential cache on PostgreSQL without Redis (notify mode): a change made through another node, by the admin path from another process or by raw SQL reaches a node through the database's notifications and is refused once they arrive; a rolled-back change is not; a node whose listener is cut caches nothing until it listens again.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateOrganization } from '../../core/admin.ts';
import { AUTH_CHANNEL, CredentialCache } from '../../core/auth/cache.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import { type Database, openDatabase } from '../../core/db/client.ts';
import { listenForNotifications } from '../../core/db/notifications.ts';
import { createLogger } from '../../core/logger.ts';
import { CATALOGUE } from '../../tools/index.ts';
import {
  createNodesOrg,
  NODE_ADMIN_TOKEN,
  type Node,
  startNode,
  until,
  warmNode as warm,
} from '../fixtures/nodes.ts';
import { createScratchDatabase, insertPat } from '../helpers.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCOPES = ['read:leads', 'write:leads'];
/** How long a notification may take to reach the other node before the test fails (it takes ms). */
const DELIVERY_MS = 3000;
/** Node A reconnects its listener only after this long, so a test can act while it is down. */
const NODE_A_RETRY_MS = 1500;

let drop: () => Promise<void>;
let databaseUrl: string;
let nodeA: Node;
let nodeB: Node;
/** Another process's handle on the database, with no cache of its own: `crm admin`, or psql. */
let outside: Database;

beforeAll(async () => {
  const scratch = await createScratchDatabase(DATABASE_URL);
  drop = scratch.drop;
  databaseUrl = scratch.url;
  // DATABASE_DIRECT_URL is what a deployment behind a transaction-mode PgBouncer sets; here both
  // URLs reach the server directly.
  nodeA = await startNode(
    scratch.url,
    { DATABASE_DIRECT_URL: scratch.url },
    { credentialListener: { retryMs: { min: NODE_A_RETRY_MS, max: NODE_A_RETRY_MS } } },
  );
  nodeB = await startNode(scratch.url);
  outside = await openDatabase({ url: scratch.url, poolMax: 2 });
});
afterAll(async () => {
  await nodeA?.services.close();
  await nodeB?.services.close();
  await outside?.close();
  await drop?.();
});

const fixture = () => createNodesOrg(nodeB);

function createPat(orgId: string, userId: string): Promise<{ token: string; keyId: string }> {
  return insertPat(nodeB.services, orgId, userId, SCOPES);
}

/**
 * Sends `method path` to `node` until it answers `status` (bounded by DELIVERY_MS), then checks that
 * the next requests answer it too: once a node has refused, it never serves the old answer again.
 */
async function answersOnceDelivered(
  node: Node,
  token: string,
  status: number,
  request: { method: string; path: string; body?: unknown } = { method: 'GET', path: '/api/v1/me' },
): Promise<void> {
  const send = async () => (await node.request(request.method, request.path, token, request.body)).status;
  expect(await until(async () => (await send()) === status, DELIVERY_MS)).toBe(true);
  for (let i = 0; i < 5; i++) expect(await send()).toBe(status);
}

describe('credential cache across nodes on PostgreSQL without Redis', () => {
  it('runs in notify mode on both nodes, each listening on a connection of its own', () => {
    expect(nodeA.services.authCache.mode).toBe('notify');
    expect(nodeB.services.authCache.mode).toBe('notify');
    expect(nodeA.services.authCache.listenerPid).not.toBeNull();
    expect(nodeA.services.authCache.listenerPid).not.toBe(nodeB.services.authCache.listenerPid);
  });

  it('serves a hot caller from memory while nothing changes', async () => {
    const f = await fixture();
    const { token } = await createPat(f.orgId, f.ownerId);
    await warm(nodeA, token);
    await warm(nodeA, f.member);
    const { hits, misses } = nodeA.services.authCache.stats;
    for (let i = 0; i < 5; i++) expect((await nodeA.request('GET', '/api/v1/me', token)).status).toBe(200);
    expect(nodeA.services.authCache.stats).toEqual({ hits: hits + 5, misses });
  });

  it('refuses on node A a key that node B revoked', async () => {
    const f = await fixture();
    const { token, keyId } = await createPat(f.orgId, f.ownerId);
    await warm(nodeA, token);
    expect((await nodeB.request('DELETE', `/api/v1/settings/api-keys/${keyId}`, f.owner)).status).toBe(200);
    await answersOnceDelivered(nodeA, token, 401);
  });

  it("refuses a user's key and session once raw SQL deletes the user", async () => {
    const f = await fixture();
    const { token } = await createPat(f.orgId, f.memberId);
    await warm(nodeA, token);
    await warm(nodeA, f.member);
    await outside.system.execute(sql`update users set deleted_at = now() where id = ${f.memberId}`);
    await answersOnceDelivered(nodeA, token, 401);
    await answersOnceDelivered(nodeA, f.member, 401);
  });

  it('answers 403 once the admin path of another process suspends the organization', async () => {
    const f = await fixture();
    const { token } = await createPat(f.orgId, f.ownerId);
    await warm(nodeA, token);
    await warm(nodeA, f.member);
    // What `crm admin set-org` does without Redis: its own handle, nothing bound to invalidate through.
    await updateOrganization(outside, f.orgId, { status: 'suspended' }, CATALOGUE.plans.features);
    await answersOnceDelivered(nodeA, token, 403);
    await answersOnceDelivered(nodeA, f.member, 403);
  });

  it("applies a role change made on node B to the user's next requests on node A", async () => {
    const f = await fixture();
    const { token } = await createPat(f.orgId, f.memberId);
    await warm(nodeA, token);
    expect((await nodeA.request('POST', '/api/v1/leads', token, { name: 'Before' })).status).toBe(201);
    const res = await nodeB.request('PUT', `/api/v1/users/${f.memberId}`, f.owner, { role: 'viewer' });
    expect(res.status).toBe(200);
    await answersOnceDelivered(nodeA, token, 403, {
      method: 'POST',
      path: '/api/v1/leads',
      body: { name: 'After' },
    });
  });

  it('keeps serving an entry whose change was rolled back', async () => {
    const f = await fixture();
    const { token, keyId } = await createPat(f.orgId, f.ownerId);
    const sentinel = await createPat(f.orgId, f.ownerId);
    await warm(nodeA, token);
    await warm(nodeA, sentinel.token);
    await expect(
      outside.transaction(async (tx) => {
        await tx.execute(sql`update api_keys set revoked_at = now() where id = ${keyId}`);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // Notifications arrive in commit order: once the sentinel's revocation (committed after the
    // rollback) has reached node A, anything the rolled-back transaction had sent would have too.
    await outside.system.execute(sql`update api_keys set revoked_at = now() where id = ${sentinel.keyId}`);
    await answersOnceDelivered(nodeA, sentinel.token, 401);
    const hits = nodeA.services.authCache.stats.hits;
    expect((await nodeA.request('GET', '/api/v1/me', token)).status).toBe(200);
    expect(nodeA.services.authCache.stats.hits).toBe(hits + 1);
  });

  it('caches nothing while its listener is cut, honours a change made meanwhile, and caches again once back', async () => {
    const f = await fixture();
    const { token, keyId } = await createPat(f.orgId, f.ownerId);
    const other = await createPat(f.orgId, f.ownerId);
    await warm(nodeA, token);
    await warm(nodeA, other.token);
    const pid = nodeA.services.authCache.listenerPid;
    expect(pid).not.toBeNull();
    await outside.system.execute(sql`select pg_terminate_backend(${pid})`);
    expect(await until(() => nodeA.services.authCache.listenerPid === null)).toBe(true);

    // Down: every request goes to the database (a miss), none is served from memory.
    const before = { ...nodeA.services.authCache.stats };
    for (let i = 0; i < 3; i++)
      expect((await nodeA.request('GET', '/api/v1/me', other.token)).status).toBe(200);
    expect(nodeA.services.authCache.stats).toEqual({ hits: before.hits, misses: before.misses + 3 });
    expect(nodeA.services.authCache.size).toBe(0);

    // A revocation committed while nobody on node A could hear it is refused at once.
    await outside.system.execute(sql`update api_keys set revoked_at = now() where id = ${keyId}`);
    expect(nodeA.services.authCache.listenerPid).toBeNull();
    expect((await nodeA.request('GET', '/api/v1/me', token)).status).toBe(401);

    // Back: a new listening connection, and hits again.
    expect(
      await until(async () => {
        const hits = nodeA.services.authCache.stats.hits;
        await nodeA.request('GET', '/api/v1/me', other.token);
        return nodeA.services.authCache.stats.hits > hits;
      }, NODE_A_RETRY_MS + DELIVERY_MS),
    ).toBe(true);
    expect(nodeA.services.authCache.listenerPid).not.toBeNull();
    expect(nodeA.services.authCache.listenerPid).not.toBe(pid);
    expect((await nodeA.request('GET', '/api/v1/me', token)).status).toBe(401);
  });

  it('never caches with a listener that does not hear what the pool sends (LISTEN through a pooler)', async () => {
    const caller: AuthContext = {
      tokenKind: 'pat',
      orgId: 'a'.repeat(24),
      userId: 'b'.repeat(24),
      role: 'member',
      plan: 'free',
      disabledFeatures: [],
      scopes: ['read:leads'],
      credentialId: 'c'.repeat(24),
    };
    // Connected and LISTENing, but its probes never come back, as behind a transaction-mode pooler.
    const deaf = listenForNotifications({
      url: databaseUrl,
      channel: AUTH_CHANNEL,
      send: async () => {},
      logger: createLogger('silent'),
      probeTimeoutMs: 200,
      startWaitMs: 300,
    });
    const cache = new CredentialCache({
      mode: 'notify',
      notifications: deaf,
      logger: createLogger('silent'),
    });
    await cache.start();
    try {
      let loads = 0;
      for (let i = 0; i < 3; i++) {
        await cache.lookup('k', new Date(), async () => {
          loads++;
          return { auth: caller, expiresAt: null };
        });
      }
      expect(loads).toBe(3);
      expect(cache.size).toBe(0);
    } finally {
      await cache.close();
    }
  });
});

// The admin API of node B, for completeness: the admin token path invalidates through triggers too.
describe('the admin API on another node', () => {
  it('revokes an OAuth token that node A then refuses', async () => {
    const f = await fixture();
    const issued = await nodeB.request('POST', '/admin/v1/oauth-tokens', NODE_ADMIN_TOKEN, {
      user_id: f.ownerId,
      app_name: 'Notify test app',
      scopes: SCOPES,
    });
    expect(issued.status).toBe(201);
    const { token, oauth_token } = (await issued.json()) as { token: string; oauth_token: { _id: string } };
    await warm(nodeA, token);
    expect(
      (await nodeB.request('DELETE', `/admin/v1/oauth-tokens/${oauth_token._id}`, NODE_ADMIN_TOKEN)).status,
    ).toBe(200);
    await answersOnceDelivered(nodeA, token, 401);
  });
});
