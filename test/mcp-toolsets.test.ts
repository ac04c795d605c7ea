// Locks in MCP toolsets in both protocol eras: a short default list, selection by X-MCP-Toolsets or
// the API key's setting (header first), refusal of tools outside the selection, and that a
// selection never grants what scopes, role or plan deny.
import { afterAll, describe, expect } from 'vitest';
import {
  DEFAULT_TOOL_BUDGET,
  parseToolsetsHeader,
  selectToolsets,
  TOOLSETS_HEADER,
} from '../mcp/toolsets.ts';
import { AREAS, CATALOGUE, TOOLS } from '../tools/index.ts';

const TOOLSET_NAMES = CATALOGUE.toolsetNames;

import { fileTest } from './fixtures/file-test.ts';
import { json, type TestContext, type TestOrg } from './helpers.ts';
import { bearer, type Connection, ERAS, envelopeOf, postMcp, serveMcpForFile } from './mcp-clients.ts';

const test = fileTest({ plan: 'enterprise' }).extend('mcpUrl', { scope: 'file' }, serveMcpForFile);
let emailSeq = 0;

const namesIn = (...toolsets: string[]) =>
  TOOLS.filter((tool) => toolsets.includes(tool.toolset) || tool.name === 'get_me')
    .map((tool) => tool.name)
    .sort();
const coreNames = namesIn('core');
const allNames = TOOLS.map((tool) => tool.name).sort();

/** Creates an API key over REST, as a user would, and returns its id and token. */
async function createKey(
  t: TestContext,
  org: TestOrg,
  body: Record<string, unknown>,
): Promise<{ id: string; token: string }> {
  const res = await t.request('POST', '/api/v1/settings/api-keys', {
    token: org.token,
    body: { label: `toolsets ${Math.random()}`, ...body },
  });
  expect(res.status).toBe(201);
  const created = await json<{ key: { id: string; toolsets: string[] }; plain_token: string }>(res);
  return { id: created.key.id, token: created.plain_token };
}

describe('the registry', () => {
  test('puts every tool in a described toolset and every toolset has tools', () => {
    for (const tool of TOOLS) expect(TOOLSET_NAMES, tool.name).toContain(tool.toolset);
    for (const name of TOOLSET_NAMES) {
      expect(
        TOOLS.some((tool) => tool.toolset === name),
        name,
      ).toBe(true);
      expect((CATALOGUE.toolsets.get(name) ?? '').length, name).toBeGreaterThan(20);
    }
  });

  test('keeps the default core toolset within its budget of 40 tools', () => {
    // A model picks tools worse as the list grows; new areas go to their own toolsets.
    expect(TOOLS.filter((tool) => tool.toolset === 'core').length).toBeLessThanOrEqual(40);
  });

  test('puts the tools of the billing areas in billing, never in core', () => {
    const billingAreas = AREAS.filter((area) => ['invoices', 'estimates', 'proposals'].includes(area.name));
    expect(billingAreas.length).toBeGreaterThan(0);
    for (const tool of billingAreas.flatMap((area) => area.tools))
      expect(tool.toolset, tool.name).toBe('billing');
  });

  test('splits the tools sensibly: everyday work in core, user writes in admin, API keys in settings', () => {
    const toolsetOf = (name: string) => TOOLS.find((tool) => tool.name === name)?.toolset;
    for (const name of ['get_me', 'list_leads', 'create_lead', 'list_users', 'get_user', 'list_trash']) {
      expect(toolsetOf(name), name).toBe('core');
    }
    for (const name of ['create_user', 'update_user', 'deactivate_user', 'delete_user']) {
      expect(toolsetOf(name), name).toBe('admin');
    }
    for (const name of ['create_api_key', 'list_api_keys', 'update_api_key', 'revoke_api_key']) {
      expect(toolsetOf(name), name).toBe('settings');
    }
  });

  test('parses the header: names, all, case and spaces; refuses unknown or no names', () => {
    expect([...parseToolsetsHeader(' Core , ADMIN,,')]).toEqual(['core', 'admin']);
    expect([...parseToolsetsHeader('settings,all')].sort()).toEqual([...TOOLSET_NAMES].sort());
    expect(() => parseToolsetsHeader('core,crm')).toThrow('Unknown toolset "crm"');
    expect(() => parseToolsetsHeader(' , ')).toThrow('names no toolset');
  });

  test('selects the header over the key setting over the default, skipping names that no longer exist', ({
    org,
  }) => {
    const auth = {
      tokenKind: 'pat' as const,
      orgId: org.orgId,
      userId: org.ownerId,
      role: 'owner' as const,
      plan: 'enterprise',
      disabledFeatures: [],
      scopes: ['mcp:write'],
      credentialId: 'k',
    };
    expect([...selectToolsets({ ...auth, toolsets: ['admin'] }, 'settings')]).toEqual(['settings']);
    expect([...selectToolsets({ ...auth, toolsets: ['admin', 'gone'] }, undefined)]).toEqual(['admin']);
    expect([...selectToolsets({ ...auth, toolsets: ['gone'] }, undefined)]).toEqual(['core']);
    expect([...selectToolsets({ ...auth, toolsets: [] }, undefined)]).toEqual(['core']);
    expect([...selectToolsets({ ...auth, toolsets: null }, undefined)]).toEqual(['core']);
  });
});

describe('the X-MCP-Toolsets header over HTTP', () => {
  test('answers 400 with the REST envelope naming the valid toolsets for an unknown name', async ({
    org,
    mcpUrl,
  }) => {
    const res = await postMcp(mcpUrl, { ...bearer(org.token), [TOOLSETS_HEADER]: 'core,crm' });
    expect(res.status).toBe(400);
    // Every registered toolset is named, so the message stays right as toolsets are added.
    const message = `Unknown toolset "crm" in X-MCP-Toolsets. Valid toolsets: ${TOOLSET_NAMES.join(', ')}, or all.`;
    expect(TOOLSET_NAMES).toContain('admin');
    expect(await json(res)).toEqual({
      error: 'Validation failed',
      code: 'validation_failed',
      message,
      details: [{ field: 'X-MCP-Toolsets', message, code: 'invalid_toolset' }],
      valid_toolsets: [...TOOLSET_NAMES, 'all'],
    });
  });

  test('answers 400 for an empty header, and authenticates before reading it', async ({ org, mcpUrl }) => {
    const empty = await postMcp(mcpUrl, { ...bearer(org.token), [TOOLSETS_HEADER]: ' ' });
    expect(empty.status).toBe(400);
    expect((await json(empty)).code).toBe('validation_failed');

    const anonymous = await postMcp(mcpUrl, { [TOOLSETS_HEADER]: 'nonsense' });
    expect(anonymous.status).toBe(401);
  });
});

describe.each(ERAS)('toolsets over $label', (era) => {
  const connections: Connection[] = [];
  async function connect(mcpUrl: URL, token: string, toolsets?: string): Promise<Connection> {
    const headers = { ...bearer(token), ...(toolsets === undefined ? {} : { [TOOLSETS_HEADER]: toolsets }) };
    const connection = await era.connect(mcpUrl, headers);
    connections.push(connection);
    return connection;
  }
  const listed = async (mcp: Connection) => (await mcp.listTools()).tools.map((tool) => tool.name).sort();
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
  });

  test(`lists only core by default: at most ${DEFAULT_TOOL_BUDGET} tools for an owner, get_me and list_leads included`, async ({
    org,
    mcpUrl,
  }) => {
    const mcp = await connect(mcpUrl, org.token);
    const names = await listed(mcp);
    expect(names).toEqual(coreNames);
    expect(names.length).toBeLessThanOrEqual(DEFAULT_TOOL_BUDGET);
    expect(names).toEqual(expect.arrayContaining(['get_me', 'list_leads']));
    expect(names).not.toContain('create_user');
    expect(names).not.toContain('create_api_key');
    expect(mcp.instructions).toContain('This connection has: core (get_me is always listed)');
    for (const name of TOOLSET_NAMES) expect(mcp.instructions).toContain(`- ${name} (`);
  });

  test('lists the selected toolsets, get_me always included, and all of them with "all"', async ({
    org,
    mcpUrl,
  }) => {
    const admin = await connect(mcpUrl, org.token, 'core,admin');
    expect(await listed(admin)).toEqual(namesIn('core', 'admin'));
    expect(admin.instructions).toContain('This connection has: core, admin');
    expect(await listed(await connect(mcpUrl, org.token, 'settings'))).toEqual(namesIn('settings'));
    expect(await listed(await connect(mcpUrl, org.token, 'all'))).toEqual(allNames);
  });

  test('refuses a tool outside the selection with tool_not_enabled, and runs it once selected', async ({
    t,
    org,
    mcpUrl,
  }) => {
    const email = `toolsets-${emailSeq++}-${Date.now()}@example.test`;
    const args = { email, name: 'Toolset user', role: 'member', password: 'correct horse battery' };
    const refused = await (await connect(mcpUrl, org.token)).callTool('create_user', args);
    expect(refused.isError).toBe(true);
    expect(envelopeOf(refused)).toEqual({
      error: 'Tool not enabled',
      code: 'tool_not_enabled',
      message:
        'create_user belongs to the "admin" toolset, which this connection has not enabled (enabled: core). ' +
        'Enable it with the X-MCP-Toolsets header, for example "X-MCP-Toolsets: core,admin", or in the API ' +
        "key's toolsets setting.",
      toolset: 'admin',
      enabled_toolsets: ['core'],
    });
    const users = await json<{ users: { email: string }[] }>(
      await t.request('GET', `/api/v1/users?search=${encodeURIComponent(email)}`, { token: org.token }),
    );
    expect(users.users).toEqual([]);

    const created = await (await connect(mcpUrl, org.token, 'admin')).callTool('create_user', args);
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ user: { email, role: 'member' } });
    const after = await json<{ users: { email: string }[] }>(
      await t.request('GET', `/api/v1/users?search=${encodeURIComponent(email)}`, { token: org.token }),
    );
    expect(after.users.map((user) => user.email)).toEqual([email]);
  });

  test('never grants a tool: scopes and role still cap the selection', async ({ t, org, mcpUrl }) => {
    const reader = await createKey(t, org, { scopes: ['mcp:read'] });
    const readerTools = await listed(await connect(mcpUrl, reader.token, 'all'));
    expect(readerTools).toEqual(
      TOOLS.filter((tool) => tool.access.kind === 'read')
        .map((tool) => tool.name)
        .sort(),
    );
    // A write tool outside the selection is refused for the scope, not offered as "enable admin".
    const refused = await (await connect(mcpUrl, reader.token)).callTool('create_user', {});
    expect(envelopeOf(refused)).toMatchObject({ code: 'scope_missing', required_scope: 'mcp:write' });

    const viewer = await t.createUser(org.orgId, 'viewer');
    const viewerTools = await listed(await connect(mcpUrl, viewer.token, 'all'));
    expect(viewerTools).toContain('list_leads');
    expect(viewerTools).not.toContain('create_lead');
    expect(viewerTools.filter((name) => namesIn('admin').includes(name) && name !== 'get_me')).toEqual([]);
    const denied = await (await connect(mcpUrl, viewer.token)).callTool('create_user', {});
    expect(envelopeOf(denied)).toMatchObject({ code: 'forbidden', required_permission: 'users.create' });
  });

  test("uses the API key's toolsets when no header is sent, and the header over them", async ({
    t,
    org,
    mcpUrl,
  }) => {
    const key = await createKey(t, org, { scopes: ['mcp:write'], toolsets: ['admin'] });
    const stored = await connect(mcpUrl, key.token);
    expect(await listed(stored)).toEqual(namesIn('admin'));
    expect(stored.instructions).toContain('This connection has: admin');
    expect(await listed(await connect(mcpUrl, key.token, 'core'))).toEqual(coreNames);
  });

  test('lets a model save toolsets on its own key with update_api_key, effective on the next connection', async ({
    t,
    org,
    mcpUrl,
  }) => {
    const key = await createKey(t, org, { scopes: ['mcp:write'] });
    expect(await listed(await connect(mcpUrl, key.token))).toEqual(coreNames);

    const updated = await (await connect(mcpUrl, key.token, 'settings')).callTool('update_api_key', {
      id: key.id,
      toolsets: ['core', 'settings'],
    });
    expect(updated.isError).toBeFalsy();
    expect(updated.structuredContent).toMatchObject({ key: { id: key.id, toolsets: ['core', 'settings'] } });
    expect(await listed(await connect(mcpUrl, key.token))).toEqual(namesIn('core', 'settings'));
  });
});
