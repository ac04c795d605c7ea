// Locks in limits that cannot be bypassed: JSON-RPC batches at /mcp (refused where the revision
// forbids them, every message counted where it allows them) and the per-IP budget of failed
// authentications on /mcp and /admin/v1, checked before any token is verified.
import { describe, expect } from 'vitest';
import { fileTest } from './fixtures/file-test.ts';
import { json, type TestContext, type TestOrg } from './helpers.ts';

const ADMIN_TOKEN = 'admin-token-for-limit-tests-0123456789';

const test = fileTest({ env: { TRUST_PROXY: '1', CRM_ADMIN_TOKEN: ADMIN_TOKEN } });
let ipSeq = 0;
/** A fresh client address per scenario (TRUST_PROXY=1 makes X-Forwarded-For the client). */
const freshIp = () => `198.51.100.${++ipSeq}`;

const call = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'get_me', arguments: {} },
});
const batchOf = (n: number) => Array.from({ length: n }, (_, i) => call(i + 1));

function postMcp(t: TestContext, token: string, body: unknown, headers: Record<string, string> = {}) {
  return t.request('POST', '/mcp', {
    token,
    body,
    headers: { accept: 'application/json, text/event-stream', 'x-forwarded-for': freshIp(), ...headers },
  });
}

describe('JSON-RPC batches at /mcp', () => {
  test.for<[string, Record<string, string>, unknown]>([
    ['MCP-Protocol-Version 2025-06-18', { 'mcp-protocol-version': '2025-06-18' }, batchOf(2)],
    ['MCP-Protocol-Version 2025-11-25', { 'mcp-protocol-version': '2025-11-25' }, batchOf(2)],
    ['MCP-Protocol-Version 2026-07-28', { 'mcp-protocol-version': '2026-07-28' }, batchOf(2)],
    [
      'an initialize asking for 2025-06-18',
      {},
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'x', version: '1' },
          },
        },
      ],
    ],
  ])(
    'refuses a batch under %s with -32600 Invalid Request, counting nothing',
    async ([_label, headers, body], { t, org }) => {
      const { token } = await t.createPat(org.orgId, org.ownerId, ['mcp:read']);
      const res = await postMcp(t, token, body, headers);
      expect(res.status).toBe(400);
      const answer = await json<{ error: { code: number; message: string }; id: null }>(res);
      expect(answer.error.code).toBe(-32600);
      expect(answer.error.message).toMatch(/batches are not allowed/);
      expect(answer.id).toBeNull();

      const single = await postMcp(t, token, call(1), { 'mcp-protocol-version': '2025-06-18' });
      expect(single.status).toBe(200);
      expect(single.headers.get('ratelimit-remaining')).toBe('119');
    },
  );

  test.for<[string, Record<string, string>]>([
    ['MCP-Protocol-Version 2025-03-26', { 'mcp-protocol-version': '2025-03-26' }],
    ['no version header (a server assumes 2025-03-26)', {}],
  ])(
    'where %s allows batches, counts every message against the 120 per key',
    async ([_label, headers], { t, org }) => {
      const { token } = await t.createPat(org.orgId, org.ownerId, ['mcp:read']);
      const first = await postMcp(t, token, batchOf(100), headers);
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-limit')).toBe('120');
      expect(first.headers.get('ratelimit-remaining')).toBe('20');
      const text = await first.text();
      // All 100 calls were answered (SSE or JSON, one result per id).
      expect(text.match(/"result"/g)?.length).toBe(100);

      // 21 more messages exceed the 20 left: the whole batch is refused.
      const refused = await postMcp(t, token, batchOf(21), headers);
      expect(refused.status).toBe(429);
      expect(await json(refused)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
      expect(refused.headers.get('retry-after')).not.toBeNull();
    },
  );
});

type Surface = {
  label: string;
  send: (t: TestContext, org: TestOrg, ip: string, token: string) => Promise<Response>;
  validToken: (t: TestContext, org: TestOrg) => Promise<string>;
};

const SURFACES: Surface[] = [
  {
    label: '/mcp',
    send: (t, _org, ip, token) =>
      t.request('POST', '/mcp', {
        token,
        body: { jsonrpc: '2.0', id: 1, method: 'ping' },
        headers: {
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'x-forwarded-for': ip,
        },
      }),
    validToken: async (t, org) => (await t.createPat(org.orgId, org.ownerId, ['mcp:read'])).token,
  },
  {
    label: '/admin/v1',
    send: (t, org, ip, token) =>
      t.request('GET', `/admin/v1/organizations/${org.orgId}`, { token, headers: { 'x-forwarded-for': ip } }),
    validToken: async () => ADMIN_TOKEN,
  },
];

describe.each(SURFACES)('failed authentication on $label', ({ send, validToken }) => {
  test('answers 401 ten times, then 429 with Retry-After before looking at the token', async ({ t, org }) => {
    const ip = freshIp();
    const guesses: number[] = [];
    for (let i = 0; i < 10; i++) guesses.push((await send(t, org, ip, `pat_${'0'.repeat(63)}${i}`)).status);
    expect(guesses).toEqual(Array(10).fill(401));

    const refused = await send(t, org, ip, `pat_${'1'.repeat(64)}`);
    expect(refused.status).toBe(429);
    expect(await json(refused)).toMatchObject({
      code: 'rate_limited',
      error: 'Too many failed authentication attempts, please try again later.',
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // Checked before verification: even the right token is not tried from this address now.
    const good = await validToken(t, org);
    expect((await send(t, org, ip, good)).status).toBe(429);
    // Another address holding a valid token is not blocked by this one's guessing.
    expect((await send(t, org, freshIp(), good)).status).toBe(200);
  });

  test('spends nothing on successes or on requests without credentials', async ({ t, org }) => {
    const ip = freshIp();
    const good = await validToken(t, org);
    for (let i = 0; i < 15; i++) expect((await send(t, org, ip, good)).status).toBe(200);
    for (let i = 0; i < 12; i++) expect((await send(t, org, ip, '')).status).toBe(401);
    expect((await send(t, org, ip, good)).status).toBe(200);
  });
});
