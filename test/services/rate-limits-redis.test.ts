// Locks in the Redis-backed limits: API nodes sharing one Redis share one budget, and an
// unreachable Redis falls back to per-node memory counters instead of leaving requests unlimited.
import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { createTestContext, fileTest, type TestContext } from '../fixtures/index.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// A client address no earlier run has used, since Redis keeps counters between test runs.
const runIp = `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

// Two API nodes on one Redis: the file's context is node A, and node B is a second context built the same way.
const NODE_ENV = { TRUST_PROXY: '1', REDIS_URL };
const test = fileTest({ env: NODE_ENV })
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the node has none.
  .extend('nodeB', { scope: 'file' }, async ({}, { onCleanup }) => {
    const nodeB = await createTestContext(NODE_ENV);
    onCleanup(() => nodeB.close());
    return nodeB;
  });

describe('rate limits in Redis', () => {
  test('shares the 300 per-IP budget between two API nodes', async ({ t: nodeA, nodeB }) => {
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) {
      const node = i % 2 === 0 ? nodeA : nodeB;
      statuses.push(
        (await node.request('GET', '/api/v1/me', { headers: { 'x-forwarded-for': runIp } })).status,
      );
    }
    expect(statuses.every((s) => s === 401)).toBe(true);
    for (const node of [nodeA, nodeB]) {
      const refused = await node.request('GET', '/api/v1/me', { headers: { 'x-forwarded-for': runIp } });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('ratelimit-limit')).toBe('300');
    }
  });

  test('still limits when Redis is unreachable, with per-node memory counters', async () => {
    // Port 1 on loopback: nothing listens, so every Redis command fails at once.
    const isolated = await createTestContext({ TRUST_PROXY: '1', REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const ip = '198.19.0.1';
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) {
        const res = await isolated.request('POST', '/api/v1/auth/login', {
          headers: { 'x-forwarded-for': ip },
          body: { email: 'nobody@example.test', password: 'wrong password' },
        });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
      expect(statuses[10]).toBe(429);
    } finally {
      await isolated.close();
    }
  });

  test('shares the failed-authentication budget of /mcp between API nodes, checked before the token', async ({
    t: nodeA,
    nodeB,
  }) => {
    const ip = `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    const guess = (node: TestContext, token: string) =>
      node.request('POST', '/mcp', {
        token,
        body: { jsonrpc: '2.0', id: 1, method: 'ping' },
        headers: { accept: 'application/json, text/event-stream', 'x-forwarded-for': ip },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push(
        (await guess(i % 2 === 0 ? nodeA : nodeB, `pat_${randomBytes(32).toString('hex')}`)).status,
      );
    }
    expect(statuses).toEqual(Array(10).fill(401));
    for (const node of [nodeA, nodeB]) {
      const refused = await guess(node, `pat_${randomBytes(32).toString('hex')}`);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).not.toBeNull();
    }
  });
});
