// Locks in the credential cache across API nodes: a change made through one node is refused on the very next request to another, with or without pub/sub; and the checks of one turn share one write to Redis.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { updateOrganization } from '../../core/admin.ts';
import { CredentialCache, connectInvalidationPublisher } from '../../core/auth/cache.ts';
import { openDatabase } from '../../core/db/client.ts';
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
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let drop: () => Promise<void>;
let databaseUrl: string;
let node1: Node;
let node2: Node;

beforeAll(async () => {
  const scratch = await createScratchDatabase(DATABASE_URL);
  drop = scratch.drop;
  databaseUrl = scratch.url;
  // Two "nodes": separate services and apps, one PostgreSQL database, one Redis.
  node1 = await startNode(scratch.url, { REDIS_URL });
  node2 = await startNode(scratch.url, { REDIS_URL });
});
afterAll(async () => {
  await node1?.services.close();
  await node2?.services.close();
  await drop?.();
});

const fixture = () => createNodesOrg(node1);

function createPat(orgId: string, userId: string): Promise<{ token: string; keyId: string }> {
  return insertPat(node1.services, orgId, userId, ['read:leads']);
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
    const res = await node1.request('PATCH', `/admin/v1/organizations/${f.orgId}`, NODE_ADMIN_TOKEN, {
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

describe("the API's Redis connection", () => {
  it("sends the commands of one turn of the event loop in one write (every hit's MGET of versions)", async () => {
    const redis = node1.services.redis;
    if (!redis?.stream) throw new Error('node1 has no Redis connection');
    const first = 'crm:test:pipelining:a';
    const keys = [first, ...['b', 'c', 'd', 'e'].map((k) => `crm:test:pipelining:${k}`)];
    await redis.set(first, 'first');
    const writes = vi.spyOn(redis.stream, 'write');
    try {
      // Five requests' credential checks in one turn: one write, not five.
      const replies = await Promise.all(keys.map((key) => redis.mget(key, first)));
      expect(writes).toHaveBeenCalledTimes(1);
      expect(replies).toEqual([
        ['first', 'first'],
        [null, 'first'],
        [null, 'first'],
        [null, 'first'],
        [null, 'first'],
      ]);
    } finally {
      writes.mockRestore();
      await redis.del(first);
    }
  });
});
