// Locks in server/discover and the 2026-07-28 caching hints as they cross the wire: discover
// advertises tools, resources, prompts and completions (no logging on this revision: see docs/mcp.md "Logging"; test/mcp-logging.test.ts has the 2025 side), every
// list that depends on the caller is `cacheScope: private` with a five-minute `ttlMs`, records are
// stale at once; and the tool list is built once per (toolset selection, access) key.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CallContext } from '../core/invoke.ts';
import { toolListFor } from '../mcp/server.ts';
import { parseToolsetsHeader } from '../mcp/toolsets.ts';
import { CATALOGUE } from '../tools/index.ts';
import { fileTest } from './fixtures/file-test.ts';
import { createLead } from './fixtures/records.ts';
import { bearer, serveMcpForFile } from './mcp-clients.ts';

const rpcMessage = z.looseObject({
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string().optional(),
  result: z.record(z.string(), z.unknown()).optional(),
});

/** The JSON-RPC messages of a body: plain JSON (one or a batch) or the data lines of an event stream. */
function messagesOf(text: string, contentType: string): z.output<typeof rpcMessage>[] {
  const payloads = contentType.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5))
    : [text];
  return payloads
    .filter((payload) => payload.trim().length > 0)
    .flatMap((payload) => {
      const parsed: unknown = JSON.parse(payload);
      return (Array.isArray(parsed) ? parsed : [parsed]).map((message) => rpcMessage.parse(message));
    });
}

/** A 2026-07-28 client whose every request and result is recorded as it crossed the wire, by method. */
async function recordingClient(url: URL, token: string) {
  const results = new Map<string, Record<string, unknown>>();
  const methods = new Map<string | number, string>();
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (typeof init?.body === 'string') {
      for (const message of messagesOf(init.body, 'application/json')) {
        if (message.id !== undefined && message.method) methods.set(message.id, message.method);
      }
    }
    const res = await fetch(input, init);
    const text = await res.clone().text();
    for (const message of messagesOf(text, res.headers.get('content-type') ?? '')) {
      const method = message.id === undefined ? undefined : methods.get(message.id);
      if (method && message.result) results.set(method, message.result);
    }
    return res;
  };
  const client = new Client(
    { name: 'crm-discover-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: bearer(token) },
      fetch: recordingFetch,
    }),
  );
  return { client, results };
}

const test = fileTest({ plan: 'enterprise' })
  .extend('mcpUrl', { scope: 'file' }, serveMcpForFile)
  .extend(
    'key',
    { scope: 'file' },
    async ({ t, org }) => (await t.createPat(org.orgId, org.ownerId, ['mcp:read'])).token,
  );

describe('2026-07-28 era on the wire', () => {
  test('server/discover advertises what the server serves', async ({ mcpUrl, key }) => {
    const { client, results } = await recordingClient(mcpUrl, key);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const discover = z
        .looseObject({
          supportedVersions: z.array(z.string()),
          capabilities: z.record(z.string(), z.unknown()),
        })
        .parse(results.get('server/discover'));
      expect(discover.supportedVersions).toContain('2026-07-28');
      expect(Object.keys(discover.capabilities).sort()).toEqual([
        'completions',
        'prompts',
        'resources',
        'tools',
      ]);
      expect(results.get('server/discover')).toMatchObject({ ttlMs: 300_000, cacheScope: 'private' });
    } finally {
      await client.close();
    }
  });

  test('caller-dependent lists are private for five minutes, records stale at once', async ({
    t,
    org,
    mcpUrl,
    key,
  }) => {
    const lead = await createLead(t, org, { name: 'Cache Co' });
    const { client, results } = await recordingClient(mcpUrl, key);
    try {
      await client.listTools();
      await client.listPrompts();
      await client.listResourceTemplates();
      await client.listResources();
      await client.readResource({ uri: `crm://leads/${lead._id}` });
      for (const method of ['tools/list', 'prompts/list', 'resources/templates/list']) {
        expect(results.get(method), method).toMatchObject({ ttlMs: 300_000, cacheScope: 'private' });
      }
      for (const method of ['resources/list', 'resources/read']) {
        expect(results.get(method), method).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
      }
    } finally {
      await client.close();
    }
  });
});

it('builds the tool list once per (selection, access) key, and apart for another key', () => {
  const call = (role: 'owner' | 'viewer', scopes: string[]): CallContext => ({
    auth: {
      tokenKind: 'pat',
      orgId: '0'.repeat(24),
      userId: '1'.repeat(24),
      role,
      plan: 'enterprise',
      disabledFeatures: [],
      scopes,
      credentialId: '2'.repeat(24),
    },
    surface: 'mcp',
    requestId: 'test',
    access: CATALOGUE.access,
    plans: CATALOGUE.plans,
  });
  const all = parseToolsetsHeader('all');
  const owner = toolListFor(call('owner', ['mcp:write']), all);
  // Another caller with the same access (another organization, another key) gets the very same list.
  expect(toolListFor({ ...call('owner', ['mcp:write', 'read:leads']), requestId: 'other' }, all)).toBe(owner);
  const reader = toolListFor(call('owner', ['mcp:read']), all);
  expect(reader).not.toBe(owner);
  expect(reader.length).toBeLessThan(owner.length);
  expect(reader.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true);
  expect(toolListFor(call('owner', ['mcp:write']), parseToolsetsHeader('core')).length).toBeLessThan(
    owner.length,
  );
  expect(toolListFor(call('viewer', ['mcp:write']), all).length).toBeLessThan(owner.length);
});
