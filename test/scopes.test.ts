// Locks in that every REST route checks its tool's scope family for scoped tokens (PAT and OAuth), that keys never exceed their creator, and that smart views, the trash and /mcp honour the families.
import { afterAll, describe, expect } from 'vitest';
import { DEFAULT_SCOPES, MCP_SCOPES, requiredScopes, SCOPED_RESOURCES } from '../core/access.ts';
import { createOauthToken } from '../core/admin.ts';
import type { ErrorBody } from '../core/errors.ts';
import { CATALOGUE, ROUTES, TOOLS } from '../tools/index.ts';
import { fileTest } from './fixtures/file-test.ts';
import { loadKits } from './fixtures/load-kits.ts';
import { json, type TestContext, type TestOrg } from './helpers.ts';
import { bearer, type Connection, ERAS, envelopeOf, serveMcpForFile } from './mcp-clients.ts';

/** A syntactically valid id: the scope check runs before input validation and before any lookup. */
const SOME_ID = 'a'.repeat(24);
const KNOWN_SCOPES = CATALOGUE.knownScopes;
/** The families the areas introduce beyond the specification's scoped resources (never defaults). */
const EXTRA_SCOPE_FAMILIES = CATALOGUE.scopeFamilies.filter((f) => !SCOPED_RESOURCES.some((r) => r === f));
const REST_SCOPES = KNOWN_SCOPES.filter((s) => !(MCP_SCOPES as readonly string[]).includes(s));

/** The scope a route's tool needs on REST, or null for the tools that need none of their own. */
function restScopeOf(route: (typeof ROUTES)[number]): string | null {
  return requiredScopes('rest', route.tool.access.kind, route.tool.access.resource)?.[0] ?? null;
}

async function tokenFor(
  t: TestContext,
  org: TestOrg,
  kind: 'pat' | 'oauth',
  scopes: string[],
): Promise<string> {
  if (kind === 'pat') return (await t.createPat(org.orgId, org.ownerId, scopes)).token;
  const issued = await createOauthToken(t.services.db, { user_id: org.ownerId, app_name: 'Scopes', scopes });
  return issued.token;
}

function requestFor(t: TestContext, route: (typeof ROUTES)[number], token: string): Promise<Response> {
  const path = `/api/v1${route.path.replace(/:[A-Za-z]+/g, SOME_ID)}`;
  return t.request(route.method, path, { token, ...(route.method === 'GET' ? {} : { body: {} }) });
}

// Enterprise and an owner: no plan feature (402) or role permission (403) stands before the scope.
const test = fileTest({ options: { withoutRateLimits: true }, plan: 'enterprise' })
  /** Every token the table needs, built once: per kind, one "all but X" token per required scope. */
  .extend('tokens', { scope: 'file' }, async ({ t, org }) => {
    const tokens: Record<'pat' | 'oauth', { all: string; allBut: Map<string, string> }> = {
      pat: { all: '', allBut: new Map() },
      oauth: { all: '', allBut: new Map() },
    };
    const needed = [...new Set(ROUTES.map(restScopeOf).filter((s): s is string => s !== null))];
    for (const kind of ['pat', 'oauth'] as const) {
      tokens[kind].all = await tokenFor(t, org, kind, REST_SCOPES);
      for (const scope of needed) {
        tokens[kind].allBut.set(
          scope,
          await tokenFor(
            t,
            org,
            kind,
            KNOWN_SCOPES.filter((s) => s !== scope),
          ),
        );
      }
    }
    return tokens;
  })
  .extend('mcpUrl', { scope: 'file' }, serveMcpForFile);

describe('the scope of every tool', () => {
  test('is declared by every tool; only get_me and the per-record trash need none of their own', () => {
    const unscoped = TOOLS.filter((tool) => tool.access.resource === null).map((tool) => tool.name);
    expect(unscoped.sort()).toEqual(UNSCOPED_TOOLS);
    for (const tool of TOOLS) expect(tool.access.resource, tool.name).not.toBeUndefined();
  });

  test("keeps the specification's twelve defaults; the new families are never defaults", () => {
    expect(DEFAULT_SCOPES).toHaveLength(12);
    for (const family of EXTRA_SCOPE_FAMILIES) {
      expect(DEFAULT_SCOPES).not.toContain(`read:${family}`);
      expect(DEFAULT_SCOPES).not.toContain(`write:${family}`);
    }
  });
});

/**
 * The only tools without a scope of their own, as their areas' test kits declare them (get_me; the
 * trash checks each record's family).
 */
const UNSCOPED_TOOLS = (await loadKits()).flatMap((kit) => kit.unscopedTools ?? []).sort();

describe.each(['pat', 'oauth'] as const)('every REST route with a %s token', (kind) => {
  const checked = ROUTES.filter((route) => !UNSCOPED_TOOLS.includes(route.tool.name));

  test.for(checked.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s refuses a token lacking its scope with the specified 403, and passes the check with it',
    async ([_name, route], { t, tokens }) => {
      const scope = restScopeOf(route);
      expect(scope, `${route.tool.name} declares a scope family`).not.toBeNull();
      if (scope === null) return;
      const refused = await requestFor(t, route, tokens[kind].allBut.get(scope) ?? '');
      expect(refused.status).toBe(403);
      expect(await json<ErrorBody>(refused)).toEqual({
        error: `Token lacks required scope: ${scope}`,
        code: 'scope_missing',
        required_scope: scope,
      });
      // Control: with the scope the request gets past the check (it may still be a 400 or a 404).
      const allowed = await requestFor(t, route, tokens[kind].all);
      const body = allowed.status === 403 ? await json<ErrorBody>(allowed) : null;
      expect(body?.code, `${route.method} ${route.path}`).not.toBe('scope_missing');
    },
  );

  test('lets any token call get_me', async ({ t, org }) => {
    const res = await t.request('GET', '/api/v1/me', { token: await tokenFor(t, org, kind, ['read:leads']) });
    expect(res.status).toBe(200);
  });
});

describe('a narrow key cannot make itself an administrator', () => {
  test('refuses each step of the read:leads escalation', async ({ t, org }) => {
    const { token } = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    const email = `escalate-${Date.now()}@example.test`;
    const password = 'a password of my choosing';

    const create = await t.request('POST', '/api/v1/users', {
      token,
      body: { email, name: 'Mallory', role: 'admin', password },
    });
    expect(create.status).toBe(403);
    expect((await json<ErrorBody>(create)).required_scope).toBe('write:users');

    const login = await t.request('POST', '/api/v1/auth/login', { body: { email, password } });
    expect(login.status).toBe(401);

    const mint = await t.request('POST', '/api/v1/settings/api-keys', {
      token,
      body: { label: 'full', scopes: ['write:users', 'write:settings'] },
    });
    expect(mint.status).toBe(403);
    expect((await json<ErrorBody>(mint)).required_scope).toBe('write:settings');

    const webhook = await t.request('POST', '/api/v1/webhooks', {
      token,
      body: { url: 'https://hooks.example.test/x', events: ['lead.created'] },
    });
    expect(webhook.status).toBe(403);
    expect((await json<ErrorBody>(webhook)).required_scope).toBe('write:webhooks');

    const member = await t.createUser(org.orgId, 'member');
    const deactivate = await t.request('POST', `/api/v1/users/${member.userId}/deactivate`, { token });
    expect(deactivate.status).toBe(403);
    expect((await json<ErrorBody>(deactivate)).required_scope).toBe('write:users');
  });

  test('lets a key with write:settings mint only keys within its own scopes', async ({ t, org }) => {
    const { token } = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:settings']);
    const beyond = await t.request('POST', '/api/v1/settings/api-keys', {
      token,
      body: { label: 'broader', scopes: ['write:settings', 'write:users'] },
    });
    expect(beyond.status).toBe(403);
    expect((await json<ErrorBody>(beyond)).required_scope).toBe('write:users');
    const within = await t.request('POST', '/api/v1/settings/api-keys', {
      token,
      body: { label: 'narrower', scopes: ['read:leads'] },
    });
    expect(within.status).toBe(201);
  });

  test('stores an unknown scope at key creation (201, named in warnings) and it grants nothing', async ({
    t,
    org,
  }) => {
    const res = await t.request('POST', '/api/v1/settings/api-keys', {
      token: org.token,
      body: { label: 'typo', scopes: ['read:leads', 'write:user'] },
    });
    expect(res.status).toBe(201);
    const created = await json<{ plain_token: string; key: { scopes: string[] }; warnings?: string[] }>(res);
    expect(created.key.scopes).toEqual(['read:leads', 'write:user']);
    expect(created.warnings?.[0]).toContain('"write:user"');
    const invite = await t.request('POST', '/api/v1/users', {
      token: created.plain_token,
      body: { email: 'typo@example.test', name: 'Typo', role: 'member' },
    });
    expect(invite.status).toBe(403);
    expect((await json<ErrorBody>(invite)).required_scope).toBe('write:users');
  });
});

describe('smart-view filters need the read scope of what they read', () => {
  const filter = (field_type: string, field: string, value: unknown) => ({
    name: `by ${field_type}`,
    visibility: 'shared',
    query: { logic: 'and', filters: [{ id: 'f', field_type, field, op: 'eq', value }] },
  });
  const contactFilter = filter('contact', 'email', 'ceo@example.test');

  test('when a token creates or updates a view', async ({ t, org }) => {
    const { token } = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    const cases: [Record<string, unknown>, string | null][] = [
      [contactFilter, 'read:contacts'],
      [filter('opportunity', 'status', 'won'), 'read:opportunities'],
      [filter('task', 'is_complete', false), null],
      [filter('lead', 'name', 'Acme'), null],
    ];
    for (const [body, scope] of cases) {
      const res = await t.request('POST', '/api/v1/smart-views', { token, body });
      if (scope === null) {
        expect(res.status).toBe(201);
        continue;
      }
      expect(res.status).toBe(403);
      expect(await json<ErrorBody>(res)).toMatchObject({ code: 'scope_missing', required_scope: scope });
    }
    const created = await t.request('POST', '/api/v1/smart-views', {
      token,
      body: filter('lead', 'name', 'x'),
    });
    const { smart_view } = await json<{ smart_view: { _id: string } }>(created);
    const update = await t.request('PATCH', `/api/v1/smart-views/${smart_view._id}`, {
      token,
      body: { query: contactFilter.query },
    });
    expect(update.status).toBe(403);
    expect((await json<ErrorBody>(update)).required_scope).toBe('read:contacts');

    const wider = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads', 'read:contacts']);
    const allowed = await t.request('POST', '/api/v1/smart-views', {
      token: wider.token,
      body: contactFilter,
    });
    expect(allowed.status).toBe(201);
  });

  test("when a token runs someone else's shared view", async ({ t, org }) => {
    const made = await t.request('POST', '/api/v1/smart-views', { token: org.token, body: contactFilter });
    const { smart_view } = await json<{ smart_view: { _id: string } }>(made);
    const run = (token: string) =>
      t.request('GET', `/api/v1/smart-views/${smart_view._id}/results`, { token });

    const narrow = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    const refused = await run(narrow.token);
    expect(refused.status).toBe(403);
    expect(await json<ErrorBody>(refused)).toEqual({
      error: 'Token lacks required scope: read:contacts',
      code: 'scope_missing',
      required_scope: 'read:contacts',
    });
    const wide = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'read:contacts']);
    expect((await run(wide.token)).status).toBe(200);
  });
});

describe('the trash follows the family of each record type', () => {
  test('lists and restores a custom-object record only with the custom_objects scopes', async ({
    t,
    org,
  }) => {
    const objectRes = await t.request('POST', '/api/v1/custom-objects', {
      token: org.token,
      body: { name: 'Scoped vehicle', fields: [{ key: 'title', label: 'Title', type: 'text' }] },
    });
    expect(objectRes.status).toBe(201);
    const { custom_object } = await json<{ custom_object: { _id: string } }>(objectRes);
    const recordRes = await t.request('POST', `/api/v1/custom-objects/${custom_object._id}/records`, {
      token: org.token,
      body: { values: { title: 'Golf' } },
    });
    expect(recordRes.status).toBe(201);
    const { record } = await json<{ record: { _id: string } }>(recordRes);
    const del = await t.request(
      'DELETE',
      `/api/v1/custom-objects/${custom_object._id}/records/${record._id}`,
      {
        token: org.token,
      },
    );
    expect(del.status).toBe(200);

    const listed = async (scopes: string[]) => {
      const { token } = await t.createPat(org.orgId, org.ownerId, scopes);
      const res = await t.request('GET', '/api/v1/trash?type=custom_object_record&limit=100', { token });
      expect(res.status).toBe(200);
      return (await json<{ items: { _id: string }[] }>(res)).items.map((i) => i._id);
    };
    expect(await listed([...DEFAULT_SCOPES])).not.toContain(record._id);
    expect(await listed(['read:custom_objects'])).toContain(record._id);

    const restore = async (scopes: string[]) => {
      const { token } = await t.createPat(org.orgId, org.ownerId, scopes);
      return t.request('POST', `/api/v1/trash/${record._id}/restore`, { token });
    };
    const refused = await restore([...DEFAULT_SCOPES]);
    expect(refused.status).toBe(403);
    expect((await json<ErrorBody>(refused)).required_scope).toBe('write:custom_objects');
    expect((await restore(['write:custom_objects'])).status).toBe(200);
  });
});

describe('at /mcp, mcp:read and mcp:write decide', () => {
  const era = ERAS[0];
  const connections: Connection[] = [];
  // Before the file's server stops (a file fixture, cleaned up after the file's last test).
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
  });
  async function connect(t: TestContext, org: TestOrg, url: URL, scopes: string[]): Promise<Connection> {
    if (!era) throw new Error('no MCP client era');
    const { token } = await t.createPat(org.orgId, org.ownerId, scopes);
    const connection = await era.connect(url, { ...bearer(token), 'x-mcp-toolsets': 'all' });
    connections.push(connection);
    return connection;
  }

  test('lets mcp:read list and call read tools of any family, and refuses a write tool', async ({
    t,
    org,
    mcpUrl,
  }) => {
    const mcp = await connect(t, org, mcpUrl, ['mcp:read']);
    const names = (await mcp.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('list_users');
    expect(names).not.toContain('create_user');
    const read = await mcp.callTool('list_users', {});
    expect(read.isError).toBeFalsy();
    const write = await mcp.callTool('create_webhook', { url: 'https://hooks.example.test/y', events: [] });
    expect(write.isError).toBe(true);
    expect(envelopeOf(write)).toMatchObject({ code: 'scope_missing', required_scope: 'mcp:write' });
  });

  test('lets mcp:write list and call both, without any REST scope', async ({ t, org, mcpUrl }) => {
    const mcp = await connect(t, org, mcpUrl, ['mcp:write']);
    const names = (await mcp.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['list_users', 'create_user', 'create_api_key']));
    expect((await mcp.callTool('list_users', {})).isError).toBeFalsy();
    const created = await mcp.callTool('create_api_key', { label: 'from mcp', scopes: ['mcp:read'] });
    expect(created.isError).toBeFalsy();
    // mcp:write reaches create_api_key, but the new key still cannot exceed it.
    const beyond = await mcp.callTool('create_api_key', { label: 'beyond', scopes: ['write:users'] });
    expect(beyond.isError).toBe(true);
    expect(envelopeOf(beyond)).toMatchObject({ code: 'scope_missing', required_scope: 'write:users' });
  });

  test('refuses a token holding every REST scope but no mcp scope', async ({ t, org, mcpUrl }) => {
    const { token } = await t.createPat(org.orgId, org.ownerId, REST_SCOPES);
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        ...bearer(token),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(403);
    expect((await json<ErrorBody>(res)).required_scope).toBe('mcp:read');
  });
});
