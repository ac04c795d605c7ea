// Locks in that a 2025-era tools/call the server answers itself (mcp/direct-call.ts) is byte for byte
// what the SDK answers, and that every request outside that one shape still reaches the SDK.
import { Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, vi } from 'vitest';
import { DEFAULT_SCOPES } from '../core/access.ts';
import { createApp } from '../http/app.ts';
import { fileTest } from './fixtures/file-test.ts';

const test = fileTest({ plan: 'enterprise' })
  /** The same services with MCP_DIRECT_CALLS=off: every request through the SDK, the reference. */
  .extend('sdkApp', { scope: 'file' }, async ({ t }) =>
    createApp({ ...t.services, config: { ...t.config, mcpDirectCalls: false } }),
  )
  .extend('keys', { scope: 'file' }, async ({ t, org }) => {
    for (const name of ['Alpha', 'Beta', 'Gamma']) {
      const res = await t.request('POST', '/api/v1/leads', { token: org.token, body: { name } });
      expect(res.status).toBe(201);
    }
    // Enough text that a page of 100 is over one result's budget (mcp/results.ts).
    const items = Array.from({ length: 90 }, (_, i) => ({ name: `Big ${i}`, description: 'x'.repeat(1000) }));
    const bulk = await t.request('POST', '/api/v1/leads/bulk', { token: org.token, body: { items } });
    expect(bulk.status).toBeLessThan(300);
    return {
      write: (await t.createPat(org.orgId, org.ownerId, ['mcp:write'])).token,
      read: (await t.createPat(org.orgId, org.ownerId, ['mcp:read'])).token,
      rest: (await t.createPat(org.orgId, org.ownerId, [...DEFAULT_SCOPES])).token,
    };
  });

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};

interface Answer {
  status: number;
  type: string | null;
  body: string;
}

type App = ReturnType<typeof createApp>;

async function post(
  app: App,
  token: string,
  body: unknown,
  headers: Record<string, string> = {},
  path = '/mcp',
): Promise<Answer> {
  const res = await app.request(path, {
    method: 'POST',
    headers: { ...HEADERS, authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

/** Ids and times differ between two creations; everything else must not. */
function withoutIdsAndTimes(text: string): string {
  return text.replace(/[0-9a-f]{24}/g, '<id>').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>');
}

const call = (name: string, args?: Record<string, unknown>, id: string | number = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, ...(args !== undefined && { arguments: args }) },
});

/** Counts SDK servers connected to a transport: one per request the SDK serves. */
function countSdkServers() {
  return vi.spyOn(Server.prototype, 'connect');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the direct answer equals the SDK answer', () => {
  const cases: Array<{
    label: string;
    body: unknown;
    isError?: boolean;
    token?: 'write' | 'read';
    headers?: Record<string, string>;
  }> = [
    { label: 'a paged list with its note', body: call('list_leads', { limit: 2 }) },
    { label: 'a list, id as a string', body: call('list_leads', { search: 'Beta' }, 'req-7') },
    {
      label: 'a read over the result budget (cut, an error)',
      body: call('list_leads', { limit: 100 }),
      isError: true,
    },
    { label: 'no arguments at all', body: call('get_me') },
    {
      label: 'a record that does not exist (tool error)',
      body: call('get_lead', { id: 'f'.repeat(24) }),
      isError: true,
    },
    { label: 'invalid arguments (validation details)', body: call('create_lead', { name: 42, bogus: true }) },
    { label: 'an unknown tool (JSON-RPC -32602)', body: call('no_such_tool', {}) },
    { label: 'a toolset not enabled', body: call('list_invoices', {}) },
    { label: 'a write with a read-only token', body: call('create_lead', { name: 'X' }), token: 'read' },
    {
      label: 'a sending tool refused before its preview',
      body: call('schedule_email', {
        lead_id: 'f'.repeat(24),
        to: 'someone@example.test',
        subject: 'Hi',
        body: 'Hello',
        scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
      }),
      headers: { 'x-mcp-toolsets': 'core,email' },
    },
    { label: 'a NUL in an argument (input guard)', body: call('list_leads', { search: 'a\u0000b' }) },
  ];

  for (const c of cases) {
    test(c.label, async ({ t, sdkApp, keys }) => {
      const token = keys[c.token ?? 'write'];
      const connects = countSdkServers();
      const direct = await post(t.app, token, c.body, c.headers);
      expect(connects).not.toHaveBeenCalled();
      const reference = await post(sdkApp, token, c.body, c.headers);
      expect(connects).toHaveBeenCalledTimes(1);
      expect(direct).toEqual(reference);
      expect(direct.status).toBe(200);
      expect(direct.type).toBe('application/json');
      if (c.isError) expect(JSON.parse(direct.body).result.isError).toBe(true);
    });
  }

  test('a created record, ids and times aside', async ({ t, sdkApp, keys }) => {
    const body = call('create_lead', { name: 'Direct', tags: ['x'] });
    const direct = await post(t.app, keys.write, body);
    const reference = await post(sdkApp, keys.write, body);
    expect(JSON.parse(direct.body).result.structuredContent.lead.name).toBe('Direct');
    expect(withoutIdsAndTimes(direct.body)).toBe(withoutIdsAndTimes(reference.body));
  });

  test('a read-only URL refusing a write', async ({ t, sdkApp, keys }) => {
    const body = call('create_lead', { name: 'X' });
    const direct = await post(t.app, keys.write, body, {}, '/mcp/readonly');
    const reference = await post(sdkApp, keys.write, body, {}, '/mcp/readonly');
    expect(direct).toEqual(reference);
    expect(JSON.parse(direct.body).result.isError).toBe(true);
  });
});

describe('everything else still reaches the SDK', () => {
  const cases: Array<{ label: string; body: unknown; headers?: Record<string, string> }> = [
    {
      label: 'a call with _meta (a progress token)',
      body: {
        ...call('list_leads', {}),
        params: { name: 'list_leads', arguments: {}, _meta: { progressToken: 5 } },
      },
    },
    {
      label: 'an Accept without text/event-stream (406)',
      body: call('list_leads', {}),
      headers: { accept: 'application/json' },
    },
    {
      label: 'an unsupported protocol version (400)',
      body: call('list_leads', {}),
      headers: { 'mcp-protocol-version': '2024-01-01' },
    },
    { label: 'a fractional id (parse error)', body: call('list_leads', {}, 1.5) },
    {
      label: 'arguments that are an array',
      body: { ...call('list_leads'), params: { name: 'list_leads', arguments: [] } },
    },
    { label: 'an extra top-level key', body: { ...call('list_leads', {}), extra: 1 } },
    { label: 'tools/list', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
  ];

  for (const c of cases) {
    test(c.label, async ({ t, sdkApp, keys }) => {
      const connects = countSdkServers();
      const product = await post(t.app, keys.write, c.body, c.headers);
      const byProduct = connects.mock.calls.length;
      const reference = await post(sdkApp, keys.write, c.body, c.headers);
      // The SDK served both alike: the same answer, through as many servers (none when its entry refused).
      expect(connects.mock.calls.length).toBe(2 * byProduct);
      expect(product).toEqual(reference);
    });
  }

  test('a credential with a log level set gets its messages on the stream', async ({ t, org, keys }) => {
    expect(keys.write).toBeTruthy(); // the leads exist
    const own = (await t.createPat(org.orgId, org.ownerId, ['mcp:write'])).token;
    const setLevel = await post(t.app, own, {
      jsonrpc: '2.0',
      id: 1,
      method: 'logging/setLevel',
      params: { level: 'debug' },
    });
    expect(setLevel.status).toBe(200);
    const connects = countSdkServers();
    const answer = await post(t.app, own, call('list_leads', {}));
    expect(connects).toHaveBeenCalledTimes(1);
    expect(answer.type).toBe('text/event-stream');
    expect(answer.body).toContain('"event":"tool_call"');
  });
});
