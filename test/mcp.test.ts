// Locks in the /mcp endpoint over real HTTP with the official clients, in both protocol eras:
// authentication before MCP, per-caller tool lists, annotations, compact paged results, the size
// budget for one result, and error forms.
import { afterAll, describe, expect } from 'vitest';
import { DEFAULT_SCOPES } from '../core/access.ts';
import { defineTool } from '../core/tool.ts';
import { cutText, pageInfoOf, pageNote, RESULT_BUDGET_CHARS, successResult } from '../mcp/results.ts';
import { TOOLSETS_HEADER } from '../mcp/toolsets.ts';
import { TOOLS } from '../tools/index.ts';
import { listLeads } from '../tools/leads/tools.ts';
import { fileTest } from './fixtures/file-test.ts';
import { json } from './helpers.ts';
import {
  bearer,
  type Connection,
  callResult,
  ERAS,
  envelopeOf,
  postMcp,
  serveMcpForFile,
  textsOf,
} from './mcp-clients.ts';

const ALLOWED_ORIGIN = 'https://app.example.test';
/** Every toolset: the listing tests below are about scopes and roles, not the default selection. */
const ALL = { [TOOLSETS_HEADER]: 'all' };

const allNames = TOOLS.map((tool) => tool.name).sort();
const readNames = TOOLS.filter((tool) => tool.access.kind === 'read')
  .map((tool) => tool.name)
  .sort();
const writeTool = TOOLS.find((tool) => tool.access.kind === 'write' && !tool.access.feature);

const BIG_LEADS = 100;

const test = fileTest({ env: { MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN }, plan: 'enterprise' })
  /** Personal access tokens of `org`'s owner: MCP read, MCP write, and the default REST scopes. */
  .extend('keys', { scope: 'file' }, async ({ t, org }) => ({
    read: (await t.createPat(org.orgId, org.ownerId, ['mcp:read'])).token,
    write: (await t.createPat(org.orgId, org.ownerId, ['mcp:write'])).token,
    defaults: (await t.createPat(org.orgId, org.ownerId, [...DEFAULT_SCOPES])).token,
  }))
  .extend('mcpUrl', { scope: 'file' }, serveMcpForFile)
  /** An organization whose leads are controlled here: 3 small ones for paging. */
  .extend('pagingOrg', { scope: 'file' }, async ({ t }) => {
    const pagingOrg = await t.createOrg();
    for (const name of ['Alpha', 'Beta', 'Gamma']) {
      const res = await t.request('POST', '/api/v1/leads', { token: pagingOrg.token, body: { name } });
      expect(res.status).toBe(201);
    }
    return pagingOrg;
  })
  /** A separate organization for size: BIG_LEADS leads of 1,000 characters each. */
  .extend('bigOrg', { scope: 'file' }, async ({ t }) => {
    const bigOrg = await t.createOrg();
    const items = Array.from({ length: BIG_LEADS }, (_, i) => ({
      name: `Big lead ${i}`,
      description: `${i} `.padEnd(1000, 'x'),
    }));
    const res = await t.request('POST', '/api/v1/leads/bulk', { token: bigOrg.token, body: { items } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ created: BIG_LEADS });
    return bigOrg;
  });

const post = (mcpUrl: URL, headers: Record<string, string>, body?: unknown) => postMcp(mcpUrl, headers, body);

describe('HTTP in front of MCP', () => {
  test('answers 401 with a Bearer challenge naming the protected resource metadata when the token is missing', async ({
    t,
    mcpUrl,
  }) => {
    const res = await post(mcpUrl, {});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${t.config.publicBaseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(await json(res)).toMatchObject({
      error: 'Authentication required',
      code: 'authentication_required',
    });
  });

  test('answers 401 "Invalid token" for a JWT-shaped token that fails verification', async ({
    t,
    mcpUrl,
  }) => {
    const res = await post(mcpUrl, bearer('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.bm90LWEtc2lnbmF0dXJl'));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", resource_metadata="${t.config.publicBaseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(await json(res)).toMatchObject({ error: 'Invalid token', code: 'invalid_jwt' });
  });

  test('refuses a personal access token holding neither mcp:read nor mcp:write with 403', async ({
    keys,
    mcpUrl,
  }) => {
    const res = await post(mcpUrl, bearer(keys.defaults));
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(
      /^Bearer error="insufficient_scope", scope="mcp:read"/,
    );
    expect(await json(res)).toEqual({
      error: 'Token lacks required scope: mcp:read',
      code: 'scope_missing',
      required_scope: 'mcp:read',
    });
  });

  test('answers 404 on an authorization server metadata path it does not serve', async ({ mcpUrl }) => {
    const res = await fetch(new URL('/.well-known/oauth-authorization-server/mcp', mcpUrl));
    expect(res.status).toBe(404);
    expect(await json(res)).toMatchObject({ error: 'Not found', code: 'route_not_found' });
  });

  test('refuses a browser Origin that is not configured, before looking at the token', async ({
    org,
    mcpUrl,
  }) => {
    const res = await post(mcpUrl, { ...bearer(org.token), origin: 'https://evil.example.test' });
    expect(res.status).toBe(403);
    expect(await json(res)).toEqual({ error: 'Forbidden', code: 'forbidden', message: 'Origin not allowed' });
  });

  test('serves a configured Origin and echoes the request id', async ({ org, mcpUrl }) => {
    const res = await post(mcpUrl, {
      ...bearer(org.token),
      origin: ALLOWED_ORIGIN,
      'x-request-id': 'mcp-req-1',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('mcp-req-1');
  });

  test('keeps no sessions: GET /mcp (a 2025 session stream) is 405', async ({ org, mcpUrl }) => {
    const res = await fetch(mcpUrl, { headers: { ...bearer(org.token), accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
  });
});

describe.each(ERAS)('MCP over $label', (era) => {
  const connections: Connection[] = [];
  async function connect(
    mcpUrl: URL,
    token: string,
    headers: Record<string, string> = {},
  ): Promise<Connection> {
    const connection = await era.connect(mcpUrl, { ...bearer(token), ...headers });
    connections.push(connection);
    return connection;
  }
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
  });

  test('negotiates the expected protocol revision and sends instructions', async ({ org, mcpUrl }) => {
    const mcp = await connect(mcpUrl, org.token);
    expect(mcp.protocolVersion).toMatch(era.version);
    expect(mcp.instructions).toContain('get_me');
    expect(mcp.instructions).toContain('totalPages');
    expect(mcp.instructions).toContain(TOOLSETS_HEADER);
  });

  test('lists every tool, get_me included, to a session token selecting all toolsets, with full annotations', async ({
    org,
    mcpUrl,
  }) => {
    const { tools } = await (await connect(mcpUrl, org.token, ALL)).listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(allNames);
    expect(tools.map((tool) => tool.name)).toContain('get_me');
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(60);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
        expect(typeof tool.annotations?.[hint], `${tool.name}.${hint}`).toBe('boolean');
      }
    }
  });

  test('shows an mcp:read key only the read-only tools and refuses a write tool as an error result', async ({
    keys,
    mcpUrl,
  }) => {
    const mcp = await connect(mcpUrl, keys.read, ALL);
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

  test('shows an mcp:write key both read and write tools', async ({ keys, mcpUrl }) => {
    const { tools } = await (await connect(mcpUrl, keys.write, ALL)).listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(allNames);
  });

  test('returns get_me as structuredContent with the same JSON as its text copy', async ({
    org,
    keys,
    mcpUrl,
  }) => {
    const result = await (await connect(mcpUrl, keys.read)).callTool('get_me', {});
    expect(result.isError).toBeFalsy();
    const texts = textsOf(result);
    expect(texts).toHaveLength(1);
    expect(result.structuredContent).toEqual(JSON.parse(texts[0] ?? 'null'));
    expect(result.structuredContent).toMatchObject({
      organization: { _id: org.orgId, plan: 'enterprise' },
      user: { _id: org.ownerId, role: 'owner' },
      token_kind: 'pat',
      scopes: ['mcp:read'],
    });
  });

  test('returns a list page as compact JSON plus a note naming the next page', async ({
    mcpUrl,
    pagingOrg,
  }) => {
    const mcp = await connect(mcpUrl, pagingOrg.token);
    const first = await mcp.callTool('list_leads', { limit: 2 });
    expect(first.isError).toBeFalsy();
    const [text, note, ...rest] = textsOf(first);
    expect(rest).toEqual([]);
    expect(text).not.toContain('\n');
    expect(JSON.parse(text ?? 'null')).toEqual(first.structuredContent);
    expect(first.structuredContent).toMatchObject({ total: 3, page: 1, limit: 2, totalPages: 2 });
    expect(note).toBe(
      'Showing page 1 of 2 (3 total). Call list_leads with page=2 and the same other arguments for more.',
    );

    const last = await mcp.callTool('list_leads', { limit: 2, page: 2 });
    expect(textsOf(last)).toHaveLength(1);
    expect(last.structuredContent).toMatchObject({ total: 3, page: 2, totalPages: 2 });

    const past = await mcp.callTool('list_leads', { limit: 2, page: 5 });
    expect(textsOf(past)[1]).toBe('Page 5 is past the end: there are 2 pages (3 total).');
  });

  test('cuts a result over the budget to a prefix of its JSON with advice, and the advice works', async ({
    t,
    mcpUrl,
    bigOrg,
  }) => {
    const mcp = await connect(mcpUrl, bigOrg.token);
    const big = await mcp.callTool('list_leads', { limit: 100 });
    expect(big.isError).toBe(true);
    expect(big.structuredContent).toBeUndefined();
    const [text, note, ...rest] = textsOf(big);
    expect(rest).toEqual([]);
    expect(text).toHaveLength(RESULT_BUDGET_CHARS);

    // The same list over REST is the full JSON the MCP text was cut from.
    const full = await (await t.request('GET', '/api/v1/leads?limit=100', { token: bigOrg.token })).text();
    expect(full.length).toBeGreaterThan(RESULT_BUDGET_CHARS);
    expect(full.startsWith(text ?? '')).toBe(true);

    expect(note).toContain('RESULT TRUNCATED');
    expect(note).toContain(`${full.length} characters`);
    expect(note).toMatch(/`search`/);
    expect(note).toMatch(/`status`/);
    const fitting = Number(/about (\d+) fits/.exec(note ?? '')?.[1]);
    expect(fitting).toBeGreaterThan(0);
    expect(fitting).toBeLessThan(BIG_LEADS);

    const narrowed = await mcp.callTool('list_leads', { limit: fitting });
    expect(narrowed.isError).toBeFalsy();
    expect(narrowed.structuredContent).toMatchObject({ total: BIG_LEADS, limit: fitting });
    expect(textsOf(narrowed)[1]).toMatch(/^Showing page 1 of \d+ \(100 total\)/);
  });

  test('returns invalid input as an error result carrying the REST validation envelope', async ({
    org,
    mcpUrl,
  }) => {
    const result = await (await connect(mcpUrl, org.token)).callTool('get_me', { bogus: 1 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const body = envelopeOf(result);
    expect(body).toMatchObject({ error: 'Validation failed', code: 'validation_failed' });
    expect(body.details).toEqual([expect.objectContaining({ field: '(root)', code: 'unrecognized_keys' })]);
  });

  test('answers an unknown tool with a JSON-RPC invalid-params error', async ({ org, mcpUrl }) => {
    const mcp = await connect(mcpUrl, org.token);
    await expect(mcp.callTool('no_such_tool', {})).rejects.toMatchObject({ code: -32602 });
  });

  test('cannot connect without a token', async ({ mcpUrl }) => {
    await expect(era.connect(mcpUrl, {})).rejects.toThrow();
  });
});

describe('result shaping', () => {
  const page = { leads: [{ name: 'a' }, { name: 'b' }], total: 5, page: 1, limit: 2, totalPages: 3 };

  test('cuts text to the budget and never splits a surrogate pair', () => {
    expect(cutText('abcdef', 10)).toBe('abcdef');
    expect(cutText('abcdef', 6)).toBe('abcdef');
    expect(cutText('abcdef', 4)).toBe('abcd');
    // "😀" is two UTF-16 units; a cut between them would leave half a character.
    expect(cutText('ab😀cd', 3)).toBe('ab');
    expect(cutText('ab😀cd', 4)).toBe('ab😀');
    expect(cutText('x'.repeat(RESULT_BUDGET_CHARS + 10))).toHaveLength(RESULT_BUDGET_CHARS);
  });

  test('recognises the paged envelope and nothing else', () => {
    expect(pageInfoOf(page)).toEqual({ key: 'leads', items: 2, total: 5, page: 1, limit: 2, totalPages: 3 });
    expect(pageInfoOf({ lead: { name: 'a' } })).toBeUndefined();
    expect(pageInfoOf({ keys: [] })).toBeUndefined();
    expect(pageInfoOf({ ...page, extra: [] })).toBeUndefined();
    expect(
      pageNote('list_leads', { key: 'leads', items: 2, total: 4, page: 2, limit: 2, totalPages: 2 }),
    ).toBe(undefined);
  });

  test('keeps a result within the budget whole, structured and noted', () => {
    const result = successResult(listLeads, page, 1000);
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual(page);
    expect(textsOf(callResult.parse(result))).toEqual([
      JSON.stringify(page),
      'Showing page 1 of 3 (5 total). Call list_leads with page=2 and the same other arguments for more.',
    ]);
  });

  test('cuts a result over the budget, drops structuredContent and marks it as an error', () => {
    const json = JSON.stringify(page);
    const result = successResult(listLeads, page, 40);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const [text, note] = textsOf(callResult.parse(result));
    expect(text).toBe(json.slice(0, 40));
    expect(note).toContain(
      `the full result of list_leads is ${json.length} characters, over the 40-character limit`,
    );
    expect(note).toContain(
      'Call list_leads again with a smaller `limit` (about 1 fits), a `search` term or filters',
    );
  });

  test('advises a tool without list parameters to ask for less', () => {
    const getter = defineTool({
      name: 'get_thing',
      title: 'Get thing',
      description: 'Returns a thing, for the result shaping test.',
      input: listLeads.input.pick({}),
      output: listLeads.output,
      access: { kind: 'read', resource: null, permission: null },
      async handler() {
        return { leads: [], total: 0, page: 1, limit: 1, totalPages: 0 };
      },
    });
    const [, note] = textsOf(callResult.parse(successResult(getter, { blob: 'y'.repeat(100) }, 50)));
    expect(note).toContain('Ask for less data in one call');
  });
});
