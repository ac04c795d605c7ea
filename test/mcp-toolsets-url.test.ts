// Locks in toolsets chosen by URL for clients that cannot set headers: /mcp/x/{toolsets} with the
// header's names and errors, a /readonly suffix that keeps any MCP URL to read tools (tools/list and
// tools/call), the precedence header > URL > the key's stored toolsets > default, and that these
// paths pass through every guard of /mcp (Origin, authentication, entry scope, batches, rate limit).
import { afterAll, describe, expect } from 'vitest';
import { CATALOGUE, TOOLS } from '../tools/index.ts';
import { fileTest } from './fixtures/file-test.ts';
import { json, type TestContext, type TestOrg } from './helpers.ts';
import { bearer, type Connection, ERAS, envelopeOf, postMcp, serveMcpForFile } from './mcp-clients.ts';

const test = fileTest({ plan: 'enterprise' }).extend('mcpUrl', { scope: 'file' }, serveMcpForFile);

const TOOLSET_NAMES = CATALOGUE.toolsetNames;
const namesIn = (...toolsets: string[]) =>
  TOOLS.filter((tool) => toolsets.includes(tool.toolset) || tool.name === 'get_me')
    .map((tool) => tool.name)
    .sort();
const readNamesIn = (...toolsets: string[]) =>
  TOOLS.filter(
    (tool) => (toolsets.includes(tool.toolset) || tool.name === 'get_me') && tool.access.kind === 'read',
  )
    .map((tool) => tool.name)
    .sort();

/** The endpoint at another path of the same server: `/mcp/x/core,admin`, `/mcp/readonly`. */
const at = (mcpUrl: URL, path: string) => new URL(path, mcpUrl);

async function createKey(t: TestContext, org: TestOrg, body: Record<string, unknown>): Promise<string> {
  const res = await t.request('POST', '/api/v1/settings/api-keys', {
    token: org.token,
    body: { label: `url toolsets ${Math.random()}`, ...body },
  });
  expect(res.status).toBe(201);
  return (await json<{ plain_token: string }>(res)).plain_token;
}

describe('toolsets in the URL over raw HTTP', () => {
  test('answers an unknown toolset with the header error, naming the URL and the valid toolsets', async ({
    org,
    mcpUrl,
  }) => {
    const res = await postMcp(at(mcpUrl, '/mcp/x/core,crm'), bearer(org.token));
    expect(res.status).toBe(400);
    const message = `Unknown toolset "crm" in the URL. Valid toolsets: ${TOOLSET_NAMES.join(', ')}, or all.`;
    expect(await json(res)).toEqual({
      error: 'Validation failed',
      code: 'validation_failed',
      message,
      details: [{ field: 'toolsets', message, code: 'invalid_toolset' }],
      valid_toolsets: [...TOOLSET_NAMES, 'all'],
    });

    const empty = await postMcp(at(mcpUrl, '/mcp/x/%2C/readonly'), bearer(org.token));
    expect(empty.status).toBe(400);
    expect((await json<{ message: string }>(empty)).message).toMatch(/^the URL names no toolset/);
  });

  test('passes every guard of /mcp: Origin, authentication, entry scope and batches', async ({
    t,
    org,
    mcpUrl,
  }) => {
    for (const path of ['/mcp/readonly', '/mcp/x/core', '/mcp/x/core,admin/readonly']) {
      const url = at(mcpUrl, path);
      const foreign = await postMcp(url, { ...bearer(org.token), origin: 'https://evil.example.test' });
      expect(foreign.status, path).toBe(403);
      expect(await json(foreign), path).toMatchObject({ code: 'forbidden', message: 'Origin not allowed' });

      // Authentication comes before the toolsets are read: a bad name does not tell an anonymous caller anything.
      const anonymous = await postMcp(at(mcpUrl, `${path.replace('/x/core', '/x/nonsense')}`), {});
      expect(anonymous.status, path).toBe(401);

      const batch = await postMcp(url, { ...bearer(org.token), 'mcp-protocol-version': '2025-06-18' }, [
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      ]);
      expect(batch.status, path).toBe(400);
      expect((await json<{ error: { code: number } }>(batch)).error.code, path).toBe(-32600);
    }
    const { token: restOnly } = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    const refused = await postMcp(at(mcpUrl, '/mcp/x/all/readonly'), bearer(restOnly));
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ code: 'scope_missing', required_scope: 'mcp:read' });
  });

  test('counts calls on every path against the same per-key MCP limit', async ({ t, org, mcpUrl }) => {
    const { token } = await t.createPat(org.orgId, org.ownerId, ['mcp:read']);
    const headers = { ...bearer(token), 'mcp-protocol-version': '2025-06-18' };
    const first = await postMcp(at(mcpUrl, '/mcp/x/core/readonly'), headers);
    expect(first.status).toBe(200);
    const second = await postMcp(mcpUrl, headers);
    expect(second.status).toBe(200);
    const remaining = Number(first.headers.get('ratelimit-remaining'));
    expect(remaining).toBeGreaterThan(0);
    expect(Number(second.headers.get('ratelimit-remaining'))).toBe(remaining - 1);
  });
});

describe.each(ERAS)('toolsets in the URL over $label', (era) => {
  const connections: Connection[] = [];
  async function connect(url: URL, token: string, headers: Record<string, string> = {}): Promise<Connection> {
    const connection = await era.connect(url, { ...bearer(token), ...headers });
    connections.push(connection);
    return connection;
  }
  const listed = async (mcp: Connection) => (await mcp.listTools()).tools.map((tool) => tool.name).sort();
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
  });

  test('lists the toolsets the URL names, percent-encoded or not, and all of them for "all"', async ({
    org,
    mcpUrl,
  }) => {
    const admin = await connect(at(mcpUrl, '/mcp/x/core,admin'), org.token);
    expect(await listed(admin)).toEqual(namesIn('core', 'admin'));
    expect(admin.instructions).toContain('This connection has: core, admin');
    expect(admin.instructions).toContain('/mcp/x/core,admin');
    expect(await listed(await connect(at(mcpUrl, '/mcp/x/Settings%2Cwebhooks'), org.token))).toEqual(
      namesIn('settings', 'webhooks'),
    );
    expect(await listed(await connect(at(mcpUrl, '/mcp/x/all'), org.token))).toEqual(
      TOOLS.map((tool) => tool.name).sort(),
    );
  });

  test("puts the header over the URL and the URL over the key's stored toolsets", async ({
    t,
    org,
    mcpUrl,
  }) => {
    const byHeader = await connect(at(mcpUrl, '/mcp/x/admin'), org.token, { 'X-MCP-Toolsets': 'settings' });
    expect(await listed(byHeader)).toEqual(namesIn('settings'));

    const token = await createKey(t, org, { scopes: ['mcp:write'], toolsets: ['admin'] });
    expect(await listed(await connect(mcpUrl, token))).toEqual(namesIn('admin'));
    expect(await listed(await connect(at(mcpUrl, '/mcp/x/webhooks'), token))).toEqual(namesIn('webhooks'));
    // /readonly alone selects nothing: the key's toolsets still apply, read tools only.
    expect(await listed(await connect(at(mcpUrl, '/mcp/readonly'), token))).toEqual(readNamesIn('admin'));
  });

  test('keeps a /readonly connection to read tools: listed, callable, and writes refused unrun', async ({
    t,
    org,
    mcpUrl,
  }) => {
    const readOnly = await connect(at(mcpUrl, '/mcp/readonly'), org.token);
    const names = await listed(readOnly);
    expect(names).toEqual(readNamesIn('core'));
    expect(names).toContain('list_leads');
    expect(names).not.toContain('create_lead');
    expect(readOnly.instructions).toContain('read-only');

    const name = `Readonly ${era.label} ${Date.now()}`;
    const refused = await readOnly.callTool('create_lead', { name });
    expect(refused.isError).toBe(true);
    expect(envelopeOf(refused)).toMatchObject({
      code: 'tool_not_enabled',
      read_only: true,
      message: expect.stringContaining('read-only'),
    });
    const found = await t.request('GET', `/api/v1/leads?search=${encodeURIComponent(name)}`, {
      token: org.token,
    });
    expect((await json<{ total: number }>(found)).total).toBe(0);

    const read = await readOnly.callTool('list_leads', { limit: 1 });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ page: 1, limit: 1 });

    const withToolsets = await connect(at(mcpUrl, '/mcp/x/core,admin/readonly'), org.token);
    expect(await listed(withToolsets)).toEqual(readNamesIn('core', 'admin'));
    const byHeader = await connect(at(mcpUrl, '/mcp/readonly'), org.token, { 'X-MCP-Toolsets': 'all' });
    expect(await listed(byHeader)).toEqual(
      TOOLS.filter((tool) => tool.access.kind === 'read')
        .map((tool) => tool.name)
        .sort(),
    );
  });
});
