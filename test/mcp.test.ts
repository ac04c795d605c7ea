// Locks in the /mcp endpoint over real HTTP with the official clients, in both protocol eras:
// authentication before MCP, per-caller tool lists, annotations, results and error forms.
import { serve } from '@hono/node-server';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_SCOPES } from '../core/access.ts';
import { TOOLS } from '../tools/index.ts';
import { createTestContext, json, type TestContext, type TestOrg } from './helpers.ts';

const ALLOWED_ORIGIN = 'https://app.example.test';

// The clients' result types differ between SDK generations; the tests read results through these.
const listResult = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      title: z.string().optional(),
      description: z.string().optional(),
      inputSchema: z.record(z.string(), z.unknown()),
      outputSchema: z.record(z.string(), z.unknown()).optional(),
      annotations: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
});
const callResult = z.object({
  isError: z.boolean().optional(),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
});
const envelope = z.looseObject({
  error: z.string(),
  code: z.string(),
  details: z.array(z.object({ field: z.string(), message: z.string(), code: z.string() })).optional(),
});

interface Connection {
  protocolVersion: string | undefined;
  instructions: string | undefined;
  listTools(): Promise<z.infer<typeof listResult>>;
  callTool(name: string, args: Record<string, unknown>): Promise<z.infer<typeof callResult>>;
  close(): Promise<void>;
}

interface Era {
  label: string;
  version: RegExp;
  connect(url: URL, headers: Record<string, string>): Promise<Connection>;
}

const clientInfo = { name: 'crm-mcp-test', version: '1.0.0' };

/** The 2.x client, which speaks either era depending on its negotiation mode. */
function clientEra(label: string, version: RegExp, mode: VersionNegotiationMode): Era {
  return {
    label,
    version,
    async connect(url, headers) {
      const client = new ModernClient(clientInfo, { versionNegotiation: { mode } });
      await client.connect(new ModernTransport(url, { requestInit: { headers } }));
      return {
        protocolVersion: client.getNegotiatedProtocolVersion(),
        instructions: client.getInstructions(),
        listTools: async () => listResult.parse(await client.listTools()),
        callTool: async (name, args) => callResult.parse(await client.callTool({ name, arguments: args })),
        close: () => client.close(),
      };
    },
  };
}

const ERAS: Era[] = [
  {
    label: '2025 era, @modelcontextprotocol/sdk 1.x client',
    version: /^2025-/,
    async connect(url, headers) {
      const client = new LegacyClient(clientInfo);
      const transport = new LegacyTransport(url, { requestInit: { headers } });
      await client.connect(transport);
      return {
        protocolVersion: transport.protocolVersion,
        instructions: client.getInstructions(),
        listTools: async () => listResult.parse(await client.listTools()),
        callTool: async (name, args) => callResult.parse(await client.callTool({ name, arguments: args })),
        close: () => client.close(),
      };
    },
  },
  clientEra('2025 era, @modelcontextprotocol/client 2.x', /^2025-/, 'legacy'),
  clientEra('2026-07-28 era, @modelcontextprotocol/client 2.x', /^2026-07-28$/, { pin: '2026-07-28' }),
];

let t: TestContext;
let org: TestOrg;
let server: ReturnType<typeof serve>;
let mcpUrl: URL;
const keys = { read: '', write: '', defaults: '' };

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const allNames = TOOLS.map((tool) => tool.name).sort();
const readNames = TOOLS.filter((tool) => tool.access.kind === 'read')
  .map((tool) => tool.name)
  .sort();
const writeTool = TOOLS.find((tool) => tool.access.kind === 'write' && !tool.access.feature);

function envelopeOf(result: z.infer<typeof callResult>) {
  const text = result.content.find((c) => c.type === 'text')?.text;
  return envelope.parse(JSON.parse(text ?? 'null'));
}

/** A raw JSON-RPC POST, for the HTTP behaviour in front of the protocol. */
function post(
  headers: Record<string, string>,
  body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' },
) {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  t = await createTestContext({ MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN });
  org = await t.createOrg({ plan: 'enterprise' });
  keys.read = (await t.createPat(org.orgId, org.ownerId, ['mcp:read'])).token;
  keys.write = (await t.createPat(org.orgId, org.ownerId, ['mcp:write'])).token;
  keys.defaults = (await t.createPat(org.orgId, org.ownerId, [...DEFAULT_SCOPES])).token;
  server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
  mcpUrl = new URL(`http://127.0.0.1:${address.port}/mcp`);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
});

describe('HTTP in front of MCP', () => {
  it('answers 401 with a bare Bearer challenge and no OAuth metadata when the token is missing', async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="crm"');
    expect(await json(res)).toMatchObject({
      error: 'Authentication required',
      code: 'authentication_required',
    });
  });

  it('answers 401 "Invalid token" for a JWT-shaped token that fails verification', async () => {
    const res = await post(bearer('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.bm90LWEtc2lnbmF0dXJl'));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="crm"');
    expect(await json(res)).toMatchObject({ error: 'Invalid token', code: 'invalid_jwt' });
  });

  it('refuses a personal access token holding neither mcp:read nor mcp:write with 403', async () => {
    const res = await post(bearer(keys.defaults));
    expect(res.status).toBe(403);
    expect(await json(res)).toEqual({
      error: 'Token lacks required scope: mcp:read',
      code: 'scope_missing',
      required_scope: 'mcp:read',
    });
  });

  it('answers 404 on the OAuth discovery documents', async () => {
    const base = new URL('/', mcpUrl);
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server/mcp',
    ]) {
      const res = await fetch(new URL(path, base));
      expect(res.status, path).toBe(404);
      expect(await json(res), path).toMatchObject({ error: 'Not found', code: 'route_not_found' });
    }
  });

  it('refuses a browser Origin that is not configured, before looking at the token', async () => {
    const res = await post({ ...bearer(org.token), origin: 'https://evil.example.test' });
    expect(res.status).toBe(403);
    expect(await json(res)).toEqual({ error: 'Forbidden', code: 'forbidden', message: 'Origin not allowed' });
  });

  it('serves a configured Origin and echoes the request id', async () => {
    const res = await post({ ...bearer(org.token), origin: ALLOWED_ORIGIN, 'x-request-id': 'mcp-req-1' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('mcp-req-1');
  });

  it('keeps no sessions: GET /mcp (a 2025 session stream) is 405', async () => {
    const res = await fetch(mcpUrl, { headers: { ...bearer(org.token), accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
  });
});

describe.each(ERAS)('MCP over $label', (era) => {
  const connections: Connection[] = [];
  async function connect(token: string): Promise<Connection> {
    const connection = await era.connect(mcpUrl, bearer(token));
    connections.push(connection);
    return connection;
  }
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
  });

  it('negotiates the expected protocol revision and sends instructions', async () => {
    const mcp = await connect(org.token);
    expect(mcp.protocolVersion).toMatch(era.version);
    expect(mcp.instructions).toContain('get_me');
  });

  it('lists every tool, get_me included, to a session token, each with full annotations', async () => {
    const { tools } = await (await connect(org.token)).listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(allNames);
    expect(tools.map((tool) => tool.name)).toContain('get_me');
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
        expect(typeof tool.annotations?.[hint], `${tool.name}.${hint}`).toBe('boolean');
      }
    }
  });

  it('shows an mcp:read key only the read-only tools and refuses a write tool as an error result', async () => {
    const mcp = await connect(keys.read);
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(readNames);
    expect(tools.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true);

    expect(writeTool, 'the registry has a write tool to try').toBeDefined();
    const result = await mcp.callTool(writeTool?.name ?? 'missing_write_tool', {});
    expect(result.isError).toBe(true);
    expect(envelopeOf(result)).toMatchObject({
      error: 'Token lacks required scope: mcp:write',
      code: 'scope_missing',
      required_scope: 'mcp:write',
    });
  });

  it('shows an mcp:write key both read and write tools', async () => {
    const { tools } = await (await connect(keys.write)).listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(allNames);
  });

  it('returns get_me as structuredContent with the same JSON as its text copy', async () => {
    const result = await (await connect(keys.read)).callTool('get_me', {});
    expect(result.isError).toBeFalsy();
    const text = result.content.find((c) => c.type === 'text')?.text ?? '';
    expect(result.structuredContent).toEqual(JSON.parse(text));
    expect(result.structuredContent).toMatchObject({
      organization: { _id: org.orgId, plan: 'enterprise' },
      user: { _id: org.ownerId, role: 'owner' },
      token_kind: 'pat',
      scopes: ['mcp:read'],
    });
  });

  it('returns invalid input as an error result carrying the REST validation envelope', async () => {
    const result = await (await connect(org.token)).callTool('get_me', { bogus: 1 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const body = envelopeOf(result);
    expect(body).toMatchObject({ error: 'Validation failed', code: 'validation_failed' });
    expect(body.details).toEqual([expect.objectContaining({ field: '(root)', code: 'unrecognized_keys' })]);
  });

  it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
    const mcp = await connect(org.token);
    await expect(mcp.callTool('no_such_tool', {})).rejects.toMatchObject({ code: -32602 });
  });

  it('cannot connect without a token', async () => {
    await expect(era.connect(mcpUrl, {})).rejects.toThrow();
  });
});
