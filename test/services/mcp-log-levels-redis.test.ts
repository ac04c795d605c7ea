// Locks in the MCP log level across API nodes: a level a credential sets with logging/setLevel on one
// node (two services on one PostgreSQL database and one Redis) decides the notifications/message a
// call sends on the other, it lives in Redis with a time to live, and an unreachable Redis keeps
// the level in the node's own memory instead of losing it.
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../app/services.ts';
import { loadConfig } from '../../core/config.ts';
import { LOG_LEVEL_TTL_MS, RedisLogLevelStore } from '../../core/log-levels.ts';
import { createLogger } from '../../core/logger.ts';
import { createOrganizationWithOwner } from '../../core/organizations.ts';
import type { Services } from '../../core/services.ts';
import { createApp } from '../../http/app.ts';
import { createScratchDatabase, insertPat } from '../helpers.ts';
import { bearer, connectLoggingClient } from '../mcp-clients.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Node {
  services: Services;
  url: URL;
  stop(): Promise<void>;
}

async function startNode(databaseUrl: string, redisUrl = REDIS_URL): Promise<Node> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: '/nonexistent',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    JWT_SECRET: 'jwt-secret-shared-by-both-test-nodes-0123456789',
  });
  const services = await createServices(config, { withoutRateLimits: true, logger: createLogger('silent') });
  const server = serve({ fetch: createApp(services).fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
  return {
    services,
    url: new URL(`http://127.0.0.1:${address.port}/mcp`),
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      });
      await services.close();
    },
  };
}

let drop: () => Promise<void>;
let databaseUrl: string;
let nodeA: Node;
let nodeB: Node;

beforeAll(async () => {
  const scratch = await createScratchDatabase(DATABASE_URL);
  drop = scratch.drop;
  databaseUrl = scratch.url;
  nodeA = await startNode(scratch.url);
  nodeB = await startNode(scratch.url);
});
afterAll(async () => {
  await nodeA?.stop();
  await nodeB?.stop();
  await drop?.();
});

async function newKey(): Promise<{ token: string; keyId: string }> {
  const { organization, owner } = await nodeA.services.db.transaction((tx) =>
    createOrganizationWithOwner(tx, {
      name: 'Log Level Org',
      plan: 'free',
      owner: {
        name: 'Owner',
        email: `log-levels-${Date.now()}-${Math.random()}@example.test`,
        password: 'pw-12345678',
      },
    }),
  );
  return insertPat(nodeA.services, organization.id, owner.id, ['mcp:read']);
}

describe('the MCP log level in Redis', () => {
  it('set through one node, it decides what a call on the other node sends', async () => {
    const { token, keyId } = await newKey();
    const onA = await connectLoggingClient(nodeA.url, bearer(token));
    try {
      expect(await onA.client.setLoggingLevel('debug')).toEqual({});
    } finally {
      await onA.close();
    }
    expect(await nodeB.services.logLevels.get(keyId)).toBe('debug');

    const onB = await connectLoggingClient(nodeB.url, bearer(token));
    try {
      await onB.client.callTool({ name: 'get_me', arguments: {} });
      expect(onB.messages.map((m) => [m.level, m.data.event])).toEqual([['debug', 'tool_call']]);
      // Raised on B, B's next call sends nothing below it, and A sees the new level.
      await onB.client.setLoggingLevel('error');
      onB.messages.length = 0;
      await onB.client.callTool({ name: 'get_me', arguments: {} });
      expect(onB.messages).toEqual([]);
    } finally {
      await onB.close();
    }
    expect(await nodeA.services.logLevels.get(keyId)).toBe('error');

    const redis = nodeA.services.redis;
    if (!redis) throw new Error('node A has no Redis');
    const ttl = await redis.pttl(`crm:log-level:${keyId}`);
    expect(ttl).toBeGreaterThan(LOG_LEVEL_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(LOG_LEVEL_TTL_MS);
  });

  it('reads anything else stored under a key as no level', async () => {
    const redis = nodeA.services.redis;
    if (!redis) throw new Error('node A has no Redis');
    const key = `test-${Date.now()}`;
    await redis.set(`crm:log-level:${key}`, 'loud', 'PX', 60_000);
    expect(await nodeB.services.logLevels.get(key)).toBeNull();
  });

  it('keeps the level in the node’s memory while Redis is unreachable', async () => {
    // Port 1 on loopback: nothing listens, so every Redis command fails at once.
    const isolated = await startNode(databaseUrl, 'redis://127.0.0.1:1');
    try {
      expect(isolated.services.logLevels).toBeInstanceOf(RedisLogLevelStore);
      await isolated.services.logLevels.set('offline-key', 'warning');
      expect(await isolated.services.logLevels.get('offline-key')).toBe('warning');
    } finally {
      await isolated.stop();
    }
  });
});
