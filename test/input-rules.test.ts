// Locks in that NUL, lone surrogates, too-deep JSON, non-finite numbers and bad percent-encoding are a 400 naming the field (never a 500, nothing stored) on every write route, auth/admin route and MCP write tool.
import { eq, sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { apiKeys, users } from '../core/db/schema.ts';
import { newId } from '../core/ids.ts';
import { MAX_JSON_DEPTH, SAFE_INPUT_CODES } from '../core/safe-input.ts';
import { ROUTES, TOOLS } from '../tools/index.ts';
import { leads } from '../tools/leads/tables.ts';
import { createLead, fileTest } from './fixtures/index.ts';
import { IGNORED_BODY, type ToolBody } from './fixtures/kit.ts';
import { kitOfTool, loadKits } from './fixtures/load-kits.ts';
import { json, type TestContext, type TestOrg } from './helpers.ts';
import { bearer, ERAS, envelopeOf, serveMcp } from './mcp-clients.ts';

const ADMIN_TOKEN = 'admin-token-for-input-rules-test';
const STRONG_PASSWORD = 'Correct-Horse-Battery-9';

/** The ids of the records the routes address, so a request that got past the guard would change something real. */
type Ids = Record<'lead' | 'user' | 'key' | 'org', string>;

const test = fileTest({
  env: { CRM_ADMIN_TOKEN: ADMIN_TOKEN },
  options: { withoutRateLimits: true },
  plan: 'enterprise',
})
  .extend('ids', { scope: 'file' }, async ({ t, org }): Promise<Ids> => {
    const lead = await createLead(t, org, { name: 'Kept' });
    const member = await t.createUser(org.orgId, 'member');
    const key = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    return { lead: lead._id, user: member.userId, key: key.keyId, org: org.orgId };
  })
  /** The file's app served over HTTP, and an MCP client of `org` with every toolset. */
  .extend('served', { scope: 'file' }, async ({ t, org }, { onCleanup }) => {
    const { url, stop } = await serveMcp(t);
    const mcp = await (ERAS[0] as (typeof ERAS)[number]).connect(url, headers(org));
    onCleanup(async () => {
      await mcp.close();
      await stop();
    });
    return { url, mcp };
  });

const headers = (org: TestOrg) => ({ ...bearer(org.token), 'x-mcp-toolsets': 'all' });

/** What a route's path parameters are filled with: the fixture of its resource, or an unknown id. */
function fillPath(ids: Ids, path: string): string {
  const byPrefix: [RegExp, string][] = [
    [/^\/api\/v1\/leads\//, ids.lead],
    [/^\/api\/v1\/users\//, ids.user],
    [/^\/api\/v1\/settings\/api-keys\//, ids.key],
    [/^\/admin\/v1\/organizations\//, ids.org],
  ];
  const id = byPrefix.find(([re]) => re.test(path))?.[1] ?? newId();
  return path.replace(/:index\b/, '0').replace(/:[A-Za-z]+/g, id);
}

type BodyCase = ToolBody;

const KITS = await loadKits();

/**
 * A valid body and its poisoned fields per write route ("METHOD path") of the kernel: the auth and
 * admin routes. The areas' routes take theirs from the area's test kit (test/<area>/kit.ts), by tool.
 */
const KERNEL_BODIES: Record<string, BodyCase> = {
  'POST /api/v1/auth/signup': {
    body: { organization_name: 'Org', name: 'Ann', email: 'ann@example.test', password: STRONG_PASSWORD },
    text: 'password',
  },
  'POST /api/v1/auth/login': {
    body: { email: 'ann@example.test', password: STRONG_PASSWORD },
    text: 'password',
  },
  'POST /api/v1/auth/refresh': { body: { refresh_token: 'r'.repeat(40) }, text: 'refresh_token' },
  'POST /admin/v1/organizations': {
    body: {
      name: 'Org',
      plan: 'free',
      owner: { name: 'Bo', email: 'bo@example.test', password: STRONG_PASSWORD },
    },
    text: 'name',
    free: 'owner',
  },
  'PATCH /admin/v1/organizations/:id': { body: { plan: 'pro' }, text: 'plan' },
  'POST /admin/v1/oauth-tokens': {
    body: { user_id: '', app_name: 'App', scopes: ['read:leads'] },
    text: 'app_name',
  },
  'DELETE /admin/v1/oauth-tokens/:id': IGNORED_BODY,
};

/**
 * Every write route the app serves with its body case: the kernel's above, each area route's from
 * its kit. The test below fails for a route missing here, so a new route needs a body in its kit.
 */
const BODIES: Record<string, BodyCase> = { ...KERNEL_BODIES };
for (const route of ROUTES) {
  const body = kitOfTool(KITS, route.tool.name)?.bodies[route.tool.name];
  if (body && route.method !== 'GET') BODIES[`${route.method} /api/v1${route.path}`] = body;
}
// The areas' public routes under /api/v1 (no tool) bring theirs by route.
for (const kit of KITS) Object.assign(BODIES, kit.publicBodies ?? {});

/** Every write route the app serves, REST table and hand-mounted auth/admin routes alike. */
function writeRoutes(t: TestContext): { method: string; path: string }[] {
  const seen = new Set<string>();
  return t.app.routes.filter((r) => {
    const key = `${r.method} ${r.path}`;
    const write = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method);
    const api = r.path.startsWith('/api/v1/') || r.path.startsWith('/admin/v1/');
    if (!write || !api || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

/** JSON text nested `depth` arrays deep, built as text: JSON.stringify itself overflows on such values. */
const nestedText = (depth: number) => `${'['.repeat(depth)}"leaf"${']'.repeat(depth)}`;

/** The JSON text of `body` with `field` set to the raw JSON text `raw`. */
function withRaw(body: Record<string, unknown>, field: string, raw: string): string {
  return JSON.stringify({ ...body, [field]: '__RAW__' }).replace('"__RAW__"', raw);
}

interface BadBody {
  label: string;
  /** The raw JSON text sent. */
  text(c: BodyCase): string;
  code: string;
  /** The field the answer must name. */
  field(c: BodyCase): string;
}

const BAD_BODIES: BadBody[] = [
  {
    label: 'a NUL in a string',
    text: (c) => JSON.stringify({ ...c.body, [c.text]: 'bad\u0000text' }),
    code: SAFE_INPUT_CODES.nul,
    field: (c) => c.text,
  },
  {
    label: 'a lone surrogate in a string',
    text: (c) => JSON.stringify({ ...c.body, [c.text]: 'bad\ud800text' }),
    code: SAFE_INPUT_CODES.surrogate,
    field: (c) => c.text,
  },
  {
    label: 'a NUL in an object key',
    text: (c) => JSON.stringify({ ...c.body, 'bad\u0000key': 'x' }),
    code: SAFE_INPUT_CODES.nul,
    field: () => 'bad\\u0000key',
  },
  {
    label: 'a lone surrogate (escaped low half) in an object key',
    text: (c) => JSON.stringify({ ...c.body, [c.text]: 'ok' }).replace(/^\{/, '{"bad\\udc00key":1,'),
    code: SAFE_INPUT_CODES.surrogate,
    field: () => 'bad\\udc00key',
  },
  {
    label: `JSON nested ${MAX_JSON_DEPTH + 1} levels deep`,
    text: (c) => JSON.stringify({ ...c.body, [c.free ?? c.text]: nested(MAX_JSON_DEPTH) }),
    code: SAFE_INPUT_CODES.depth,
    field: (c) => c.free ?? c.text,
  },
  {
    label: 'JSON nested 5,000 levels deep',
    text: (c) => withRaw(c.body, c.free ?? c.text, nestedText(5000)),
    code: SAFE_INPUT_CODES.depth,
    field: (c) => c.free ?? c.text,
  },
  {
    label: 'the number 1e309',
    text: (c) => withRaw(c.body, c.text, '1e309'),
    code: SAFE_INPUT_CODES.number,
    field: (c) => c.text,
  },
  {
    label: 'the number -1e309 in a free-form field',
    text: (c) => withRaw(c.body, c.free ?? c.text, '[-1e309]'),
    code: SAFE_INPUT_CODES.number,
    field: (c) => `${c.free ?? c.text}.0`,
  },
];

/** True when a detail's field is `field` or a place inside it (a too-deep value is named where it gets too deep). */
const names = (detailField: string, field: string) =>
  detailField === field || detailField.startsWith(`${field}.`);

function credentialFor(org: TestOrg, path: string): string {
  if (path.startsWith('/admin/')) return ADMIN_TOKEN;
  return org.token;
}

/** Every row of every table, counted; and the records requests address, read back whole. */
async function snapshot(t: TestContext, ids: Ids): Promise<unknown> {
  const db = t.services.db.system;
  const tables = await db.execute(
    sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`,
  );
  const rowsOf = (r: unknown): Record<string, unknown>[] =>
    Array.isArray(r) ? r : ((r as { rows: Record<string, unknown>[] }).rows ?? []);
  const counts: Record<string, unknown> = {};
  for (const row of rowsOf(tables)) {
    const name = String(row.table_name);
    if (name.startsWith('__')) continue;
    const count = await db.execute(sql.raw(`select count(*)::int as n from "${name}"`));
    counts[name] = rowsOf(count)[0]?.n;
  }
  return {
    counts,
    lead: await db.select().from(leads).where(eq(leads.id, ids.lead)),
    user: await db.select().from(users).where(eq(users.id, ids.user)),
    key: await db.select().from(apiKeys).where(eq(apiKeys.id, ids.key)),
  };
}

describe('unsafe input in request bodies', () => {
  test('has a valid body for every write route the app serves', ({ t }) => {
    const missing = writeRoutes(t)
      .map((r) => `${r.method} ${r.path}`)
      .filter((key) => !(key in BODIES));
    expect(missing).toEqual([]);
  });

  test('answers every write route, auth and admin route included, 400 naming the field, and stores nothing', async ({
    t,
    org,
    ids,
  }) => {
    const before = await snapshot(t, ids);
    const failures: string[] = [];
    for (const route of writeRoutes(t)) {
      const c = BODIES[`${route.method} ${route.path}`] as BodyCase;
      for (const bad of BAD_BODIES) {
        const res = await t.app.request(fillPath(ids, route.path), {
          method: route.method,
          headers: {
            authorization: `Bearer ${credentialFor(org, route.path)}`,
            'content-type': 'application/json',
          },
          body: bad.text(c),
        });
        const body = await json<{ code?: string; details?: { field: string; code: string }[] }>(res);
        const named = body.details?.some((d) => d.code === bad.code && names(d.field, bad.field(c)));
        const refused = res.status === 400 && body.code === 'validation_failed' && named;
        if (c.ignoresBody ? res.status >= 500 : !refused) {
          failures.push(
            `${route.method} ${route.path} with ${bad.label}: ${res.status} ${JSON.stringify(body)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
    expect(await snapshot(t, ids)).toEqual(before);
  });
});

describe('unsafe input in URLs', () => {
  const BAD_QUERIES: { label: string; query: string; code: string }[] = [
    { label: 'an encoded NUL', query: 'a%00b', code: SAFE_INPUT_CODES.nul },
    { label: 'an encoded lone surrogate (not UTF-8)', query: '%ED%A0%80', code: SAFE_INPUT_CODES.encoding },
    { label: 'malformed percent-encoding', query: '%E0%A4%A', code: SAFE_INPUT_CODES.encoding },
    { label: 'a stray percent sign', query: '100%', code: SAFE_INPUT_CODES.encoding },
  ];

  test('answers a bad query value or path parameter on every route 400, on GET routes too', async ({
    t,
    org,
    ids,
  }) => {
    const failures: string[] = [];
    const routes = t.app.routes.filter(
      (r) => r.method !== 'ALL' && (r.path.startsWith('/api/v1/') || r.path.startsWith('/admin/v1/')),
    );
    for (const route of routes) {
      for (const bad of BAD_QUERIES) {
        const urls = [`${fillPath(ids, route.path)}?q=${bad.query}`];
        if (route.path.includes(':'))
          urls.push(route.path.replace(/:[A-Za-z]+/, bad.query).replace(/:[A-Za-z]+/g, newId()));
        for (const url of urls) {
          const res = await t.app.request(url, {
            method: route.method,
            headers: {
              authorization: `Bearer ${credentialFor(org, route.path)}`,
              'content-type': 'application/json',
            },
            ...(route.method === 'GET' ? {} : { body: '{}' }),
          });
          const body = await json<{ code?: string; details?: { code: string }[] }>(res);
          if (res.status !== 400 || !body.details?.some((d) => d.code === bad.code)) {
            failures.push(`${route.method} ${url}: ${res.status} ${JSON.stringify(body)}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('unsafe input in MCP tool arguments', () => {
  const writeTools = TOOLS.filter((tool) => tool.access.kind !== 'read');
  const BAD_ARGS: { label: string; args: Record<string, unknown>; code: string; field: string }[] = [
    {
      label: 'a NUL in a string',
      args: { name: 'bad\u0000text' },
      code: SAFE_INPUT_CODES.nul,
      field: 'name',
    },
    {
      label: 'a lone surrogate',
      args: { note: 'bad\udbffx' },
      code: SAFE_INPUT_CODES.surrogate,
      field: 'note',
    },
    { label: 'a NUL in a key', args: { 'k\u0000': 1 }, code: SAFE_INPUT_CODES.nul, field: 'k\\u0000' },
    {
      label: `JSON ${MAX_JSON_DEPTH + 1} levels deep`,
      args: { values: nested(MAX_JSON_DEPTH) },
      code: SAFE_INPUT_CODES.depth,
      field: 'values',
    },
  ];

  test('answers every write tool an isError validation result naming the field, and stores nothing', async ({
    t,
    ids,
    served,
  }) => {
    const before = await snapshot(t, ids);
    const failures: string[] = [];
    for (const tool of writeTools) {
      for (const bad of BAD_ARGS) {
        const result = await served.mcp.callTool(tool.name, { id: ids.lead, ...bad.args });
        const envelope = result.isError ? envelopeOf(result) : undefined;
        const named = envelope?.details?.some((d) => d.code === bad.code && names(d.field, bad.field));
        if (envelope?.code !== 'validation_failed' || !named) {
          failures.push(`${tool.name} with ${bad.label}: ${JSON.stringify(result)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(await snapshot(t, ids)).toEqual(before);
  });

  test('answers tool calls carrying 1e309 or JSON 5,000 deep (no client library sends them) the same way', async ({
    org,
    served,
  }) => {
    const failures: string[] = [];
    const RAW: [string, string][] = [
      ['1e309', SAFE_INPUT_CODES.number],
      [nestedText(5000), SAFE_INPUT_CODES.depth],
    ];
    for (const tool of writeTools)
      for (const [raw, code] of RAW) {
        const res = await fetch(served.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
            ...headers(org),
          },
          body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${tool.name}","arguments":{"value":${raw}}}}`,
        });
        const text = await res.text();
        if (!text.includes(`\\"code\\":\\"${code}\\"`) || !text.includes('"isError":true')) {
          failures.push(`${tool.name}: ${res.status} ${text.slice(0, 300)}`);
        }
      }
    expect(failures).toEqual([]);
  });
});
