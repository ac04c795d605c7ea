// Locks in MCP logging on the 2025 revisions: `logging/setLevel` is kept per credential across
// stateless requests, a tools/call sends `notifications/message` (logger "crm", structured data) at
// or above that level and never below, nothing before a level is set, another credential is not
// affected, an invalid level is -32602; on 2026-07-28 logging is not declared, `logging/setLevel`
// is 404 / -32601 and nothing is sent.
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { MemoryLogLevelStore } from '../core/log-levels.ts';
import {
  createInvoice,
  createLead,
  createLeadWithContact,
  fileTest,
  type TestContext,
  type TestOrg,
  TOOL,
} from './fixtures/index.ts';
import {
  bearer,
  callResult,
  connectLoggingClient,
  type LoggingClient,
  type LogMessage,
  postMcp,
  serveMcpForFile,
} from './mcp-clients.ts';

/** A JSON-RPC answer of a raw POST, from JSON or from the data line of an event stream. */
async function answerOf(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text);
  const data = text.split('\n').find((line) => line.startsWith('data:'));
  return JSON.parse(data?.slice(5) ?? 'null');
}

const levelsOf = (messages: LogMessage[]) => messages.map((m) => `${m.level}:${m.data.event}`);

async function withLegacy<T>(
  url: URL,
  token: string,
  run: (legacy: LoggingClient) => Promise<T>,
): Promise<T> {
  const legacy = await connectLoggingClient(url, { ...bearer(token), 'X-MCP-Toolsets': 'all' });
  try {
    return await run(legacy);
  } finally {
    await legacy.close();
  }
}

async function setLevel(url: URL, token: string, level: LoggingLevel): Promise<void> {
  await withLegacy(url, token, async ({ client }) => {
    expect(await client.setLoggingLevel(level)).toEqual({});
  });
}

async function newKey(t: TestContext, org: TestOrg): Promise<string> {
  return (await t.createPat(org.orgId, org.ownerId, ['mcp:write'])).token;
}

const test = fileTest({ plan: 'enterprise' }).extend('mcpUrl', { scope: 'file' }, serveMcpForFile);

describe('2025 era', () => {
  test('declares logging, and sends nothing before a level is set', async ({ t, org, mcpUrl }) => {
    const key = await newKey(t, org);
    await withLegacy(mcpUrl, key, async ({ client, messages }) => {
      expect(client.getServerCapabilities()?.logging).toEqual({});
      const me = callResult.parse(await client.callTool({ name: 'get_me', arguments: {} }));
      expect(me.isError ?? false).toBe(false);
      expect(messages).toEqual([]);
    });
  });

  test('a level set in one request holds for later requests and new connections: debug sends the call summary', async ({
    t,
    org,
    mcpUrl,
  }) => {
    const key = await newKey(t, org);
    await setLevel(mcpUrl, key, 'debug');
    // A new connection: a new initialize, new HTTP requests, a fresh server instance for each.
    await withLegacy(mcpUrl, key, async ({ client, messages }) => {
      await client.callTool({ name: 'get_me', arguments: {} });
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatchObject({
        level: 'debug',
        logger: 'crm',
        data: { event: 'tool_call', tool: 'get_me', outcome: 'success' },
      });
      expect(messages[0]?.data.duration_ms).toEqual(expect.any(Number));
      expect(messages[0]?.data.request_id).toEqual(expect.any(String));
    });
  });

  test('sends at or above the level, never below: notice for a preview, info for what a send queued', async ({
    t,
    org,
    mcpUrl,
  }) => {
    const key = await newKey(t, org);
    const { leadId, email } = await createLeadWithContact(t, org);
    const first = await createInvoice(t, org, { lead_id: leadId });
    const second = await createInvoice(t, org, { lead_id: leadId });

    await setLevel(mcpUrl, key, 'notice');
    await withLegacy(mcpUrl, key, async ({ client, messages }) => {
      await client.callTool({ name: 'send_invoice', arguments: { id: first._id } });
      expect(levelsOf(messages)).toEqual(['notice:preview_returned']);
      expect(messages[0]?.data).toMatchObject({ tool: 'send_invoice', to: [email] });
      expect(String(messages[0]?.data.message)).toContain('confirm: true');

      // Sending is info, below notice: nothing arrives (and no debug summary either).
      messages.length = 0;
      const sent = callResult.parse(
        await client.callTool({ name: 'send_invoice', arguments: { id: first._id, confirm: true } }),
      );
      expect(sent.structuredContent?.sent).toBe(true);
      expect(messages).toEqual([]);
    });

    await setLevel(mcpUrl, key, 'info');
    await withLegacy(mcpUrl, key, async ({ client, messages }) => {
      const sent = callResult.parse(
        await client.callTool({ name: 'send_invoice', arguments: { id: second._id, confirm: true } }),
      );
      const mail = z.object({ id: z.string() }).parse(sent.structuredContent?.mail);
      expect(levelsOf(messages)).toEqual(['info:sent']);
      expect(messages[0]?.data).toMatchObject({
        tool: 'send_invoice',
        mail: { id: mail.id, to: email },
        records: [second._id],
      });
    });
  });

  test('warning when a result is shortened to the budget', async ({ t, org, mcpUrl }) => {
    const key = await newKey(t, org);
    const lead = await createLead(t, org);
    const longText = `${'Scope of work. '.repeat(3300)}End.`;
    await setLevel(mcpUrl, key, 'warning');
    await withLegacy(mcpUrl, key, async ({ client, messages }) => {
      await client.callTool({
        name: 'create_proposal',
        arguments: {
          lead_id: lead._id,
          title: 'Big proposal',
          sections: [
            { heading: 'One', body_markdown: longText },
            { heading: 'Two', body_markdown: longText },
          ],
        },
      });
      expect(levelsOf(messages)).toEqual(['warning:result_shortened']);
      expect(messages[0]?.data).toMatchObject({ tool: 'create_proposal', limit_chars: 80_000 });
    });
  });

  test('error with the request id when a tool fails inside the server', async ({ t, org, mcpUrl }) => {
    const key = await newKey(t, org);
    await setLevel(mcpUrl, key, 'error');
    const failing = vi.spyOn(TOOL.get_me, 'handler').mockRejectedValueOnce(new Error('disk on fire'));
    try {
      await withLegacy(mcpUrl, key, async ({ client, messages }) => {
        await expect(client.callTool({ name: 'get_me', arguments: {} })).rejects.toThrow(/Internal error/);
        expect(levelsOf(messages)).toEqual(['error:internal_error']);
        const requestId = messages[0]?.data.request_id;
        expect(requestId).toEqual(expect.any(String));
        expect(JSON.stringify(messages[0])).not.toContain('disk on fire');
      });
    } finally {
      failing.mockRestore();
    }
  });

  test('another key of the same user, and another organization, are not affected', async ({
    t,
    org,
    other,
    mcpUrl,
  }) => {
    const key = await newKey(t, org);
    await setLevel(mcpUrl, key, 'debug');
    for (const token of [await newKey(t, org), await newKey(t, other), org.token]) {
      await withLegacy(mcpUrl, token, async ({ client, messages }) => {
        await client.callTool({ name: 'get_me', arguments: {} });
        expect(messages).toEqual([]);
      });
    }
  });

  test('an invalid level is -32602 and changes nothing', async ({ t, org, mcpUrl }) => {
    const key = await newKey(t, org);
    await setLevel(mcpUrl, key, 'error');
    const res = await postMcp(mcpUrl, bearer(key), {
      jsonrpc: '2.0',
      id: 3,
      method: 'logging/setLevel',
      params: { level: 'loud' },
    });
    expect(await answerOf(res)).toMatchObject({ id: 3, error: { code: -32602 } });
    // Still "error": a debug summary does not arrive.
    await withLegacy(mcpUrl, key, async ({ client, messages }) => {
      await client.callTool({ name: 'get_me', arguments: {} });
      expect(messages).toEqual([]);
    });
  });
});

describe('2025 era: plain JSON or a stream', () => {
  const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_me', arguments: {} } };
  const headers = (key: string) => ({ ...bearer(key), 'mcp-protocol-version': '2025-06-18' });

  test('a single request is one JSON body until a log level is set, then a stream that carries the log', async ({
    t,
    org,
    mcpUrl,
  }) => {
    const key = await newKey(t, org);
    const plain = await postMcp(mcpUrl, headers(key), call);
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await answerOf(plain)).toMatchObject({ id: 7, result: { structuredContent: {} } });

    await setLevel(mcpUrl, key, 'debug');
    const streamed = await postMcp(mcpUrl, headers(key), call);
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await streamed.text()).split('\n').filter((line) => line.startsWith('data:'));
    // The log message, then the result: what a JSON body would have dropped.
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(events[0]?.slice(5) ?? 'null')).toMatchObject({ method: 'notifications/message' });
  });

  test('a batch still gets a stream', async ({ t, org, mcpUrl }) => {
    const key = await newKey(t, org);
    const batch = await postMcp(mcpUrl, { ...bearer(key), 'mcp-protocol-version': '2025-03-26' }, [call]);
    expect(batch.headers.get('content-type')).toMatch(/^text\/event-stream/);
  });
});

describe('2026-07-28 era', () => {
  test('logging is not declared, logging/setLevel is 404 -32601, and a set level sends nothing', async ({
    t,
    org,
    mcpUrl,
  }) => {
    const key = await newKey(t, org);
    await setLevel(mcpUrl, key, 'debug');

    const res = await postMcp(
      mcpUrl,
      { ...bearer(key), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'logging/setLevel' },
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'logging/setLevel',
        params: {
          level: 'debug',
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'crm-logging-test', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
    );
    expect(res.status).toBe(404);
    expect(await answerOf(res)).toMatchObject({ id: 9, error: { code: -32601 } });

    const messages: unknown[] = [];
    const client = new ModernClient(
      { name: 'crm-logging-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    client.setNotificationHandler('notifications/message', (notification) => {
      messages.push(notification.params);
    });
    await client.connect(new ModernTransport(mcpUrl, { requestInit: { headers: bearer(key) } }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(client.getServerCapabilities()?.logging).toBeUndefined();
      await client.callTool({ name: 'get_me', arguments: {} });
      expect(messages).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('the in-process level store (no REDIS_URL)', () => {
  it('forgets a level after its time to live, and the oldest-set one when full', async () => {
    const store = new MemoryLogLevelStore(30, 2);
    await store.set('a', 'info');
    expect(await store.get('a')).toBe('info');
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(await store.get('a')).toBeNull();

    const full = new MemoryLogLevelStore(60_000, 2);
    await full.set('a', 'debug');
    await full.set('b', 'notice');
    await full.set('a', 'error'); // Set again: now the newest.
    await full.set('c', 'warning');
    expect([await full.get('a'), await full.get('b'), await full.get('c')]).toEqual([
      'error',
      null,
      'warning',
    ]);
  });
});
