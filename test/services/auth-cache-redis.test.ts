// Locks in the credential cache across API nodes: a change made through one node is refused on the very next request to another, with or without pub/sub.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../app/services.ts';
import { updateOrganization } from '../../core/admin.ts';
import { CredentialCache, connectInvalidationPublisher } from '../../core/auth/cache.ts';
import { signSession } from '../../core/auth/jwt.ts';
import { loadConfig } from '../../core/config.ts';
import { openDatabase } from '../../core/db/client.ts';
import { createLogger } from '../../core/logger.ts';
import { createOrganizationWithOwner } from '../../core/organizations.ts';
import type { Services } from '../../core/services.ts';
import { insertUser } from '../../core/users.ts';
import { createApp } from '../../http/app.ts';
import { CATALOGUE } from '../../tools/index.ts';
import { createScratchDatabase, insertPat } from '../helpers.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_TOKEN = 'admin-token-for-cache-nodes-0123';

interface Node {
  services: Services;
  request(method: string, path: string, token: string, body?: unknown): Promise<Response>;
}

let drop: () => Promise<void>;
let databaseUrl: string;
let node1: Node;
let node2: Node;

async function startNode(databaseUrl: string): Promise<Node> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: '/nonexistent',
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    CRM_ADMIN_TOKEN: ADMIN_TOKEN,
    // Nodes of one deployment share the session key.
    JWT_SECRET: 'jwt-secret-shared-by-both-test-nodes-0123456789',
  });
  const services = await createServices(config, { withoutRateLimits: true, logger: createLogger('silent') });
  const app = createApp(services);
  return {
    services,
    request: async (method, path, token, body) =>
      app.request(path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
  };
}

beforeAll(async () => {
  const scratch = await createScratchDatabase(DATABASE_URL);
  drop = scratch.drop;
  databaseUrl = scratch.url;
  // Two "nodes": separate services and apps, one PostgreSQL database, one Redis.
  node1 = await startNode(scratch.url);
  node2 = await startNode(scratch.url);
});
afterAll(async () => {
  await node1?.services.close();
  await node2?.services.close();
  await drop?.();
});

let seq = 0;
interface Fixture {
  orgId: string;
  ownerId: string;
  memberId: string;
  /** Session JWTs. */
  owner: string;
  member: string;
}

async function fixture(): Promise<Fixture> {
  const db = node1.services.db;
  const stamp = `${Date.now()}-${seq++}`;
  const { organization, owner } = await db.transaction((tx) =>
    createOrganizationWithOwner(tx, {
      name: 'Nodes Org',
      plan: 'free',
      owner: { name: 'Owner', email: `nodes-owner-${stamp}@example.test`, password: 'pw-12345678' },
    }),
  );
  const member = await insertUser(db.system, {
    orgId: organization.id,
    role: 'member',
    email: `nodes-member-${stamp}@example.test`,
    name: 'Member',
    password: 'pw-12345678',
  });
  const sign = (sub: string) => signSession(node1.services.jwtKey, { sub, org: organization.id });
  return {
    orgId: organization.id,
    ownerId: owner.id,
    memberId: member.id,
    owner: await sign(owner.id),
    member: await sign(member.id),
  };
}

function createPat(orgId: string, userId: string): Promise<{ token: string; keyId: string }> {
  return insertPat(node1.services, orgId, userId, ['read:leads']);
}

/** Fills a node's cache for `token` and checks that its next request is served from memory. */
async function warm(node: Node, token: string): Promise<void> {
  expect((await node.request('GET', '/api/v1/me', token)).status).toBe(200);
  const hits = node.services.authCache.stats.hits;
  expect((await node.request('GET', '/api/v1/me', token)).status).toBe(200);
  expect(node.services.authCache.stats.hits).toBe(hits + 1);
}

async function until(condition: () => boolean, timeoutMs = 2000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

describe('credential cache across nodes sharing Redis', () => {
  it('runs in redis mode on both nodes', () => {
    expect(node1.services.authCache.mode).toBe('redis');
    expect(node2.services.authCache.mode).toBe('redis');
  });

  it('refuses a key revoked on node 1 on the very next request to node 2', async () => {
    const f = await fixture();
    const { token, keyId } = await createPat(f.orgId, f.ownerId);
    await warm(node1, token);
    await warm(node2, token);
    const res = await node1.request('DELETE', `/api/v1/settings/api-keys/${keyId}`, f.owner);
    expect(res.status).toBe(200);
    expect((await node2.request('GET', '/api/v1/me', token)).status).toBe(401);
    expect((await node1.request('GET', '/api/v1/me', token)).status).toBe(401);
  });

  it('answers 403 on node 2 right after the admin API on node 1 suspends the organization', async () => {
    const f = await fixture();
    const { token } = await createPat(f.orgId, f.ownerId);
    await warm(node2, token);
    await warm(node2, f.member);
    const res = await node1.request('PATCH', `/admin/v1/organizations/${f.orgId}`, ADMIN_TOKEN, {
      status: 'suspended',
    });
    expect(res.status).toBe(200);
    expect((await node2.request('GET', '/api/v1/me', token)).status).toBe(403);
    expect((await node2.request('GET', '/api/v1/me', f.member)).status).toBe(403);
  });

  it("refuses a user's session on node 2 right after node 1 deactivates the user", async () => {
    const f = await fixture();
    await warm(node2, f.member);
    const res = await node1.request('POST', `/api/v1/users/${f.memberId}/deactivate`, f.owner);
    expect(res.status).toBe(200);
    expect((await node2.request('GET', '/api/v1/me', f.member)).status).toBe(401);
  });

  it('drops the entries of other nodes on the pub/sub message', async () => {
    const f = await fixture();
    const { token, keyId } = await createPat(f.orgId, f.ownerId);
    await warm(node2, token);
    const before = node2.services.authCache.size;
    await node1.request('DELETE', `/api/v1/settings/api-keys/${keyId}`, f.owner);
    expect(await until(() => node2.services.authCache.size < before)).toBe(true);
  });

  it('does not depend on pub/sub: a node that never hears the message still refuses', async () => {
    // A cache that was never started has no subscriber; only the versions in Redis can stop it.
    const deaf = new CredentialCache({
      mode: 'redis',
      redis: node2.services.redis,
      logger: createLogger('silent'),
    });
    const original = node2.services.authCache;
    node2.services.authCache = deaf;
    try {
      const f = await fixture();
      const { token, keyId } = await createPat(f.orgId, f.ownerId);
      await warm(node2, token);
      await node1.request('DELETE', `/api/v1/settings/api-keys/${keyId}`, f.owner);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(deaf.size).toBe(1);
      expect((await node2.request('GET', '/api/v1/me', token)).status).toBe(401);
    } finally {
      node2.services.authCache = original;
    }
  });

  it('reaches the nodes from a process without services once it binds a publisher (crm admin)', async () => {
    const f = await fixture();
    const { token } = await createPat(f.orgId, f.ownerId);
    await warm(node2, token);
    // What `crm admin set-org` does: its own database handle, no services, no cache of its own.
    const cliDb = await openDatabase({ url: databaseUrl, poolMax: 1 });
    const disconnect = connectInvalidationPublisher(cliDb, REDIS_URL, createLogger('silent'));
    try {
      await updateOrganization(cliDb, f.orgId, { status: 'inactive' }, CATALOGUE.plans.features);
    } finally {
      disconnect();
      await cliDb.close();
    }
    expect((await node2.request('GET', '/api/v1/me', token)).status).toBe(403);
  });
});
