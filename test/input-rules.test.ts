// Locks in that NUL, lone surrogates, too-deep JSON, non-finite numbers and bad percent-encoding are a 400 naming the field (never a 500, nothing stored) on every write route, auth/admin route and MCP write tool.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeys, users } from '../core/db/schema.ts';
import { newId } from '../core/ids.ts';
import { MAX_JSON_DEPTH, SAFE_INPUT_CODES } from '../core/safe-input.ts';
import { TOOLS } from '../tools/index.ts';
import { leads } from '../tools/leads/tables.ts';
import { createTestContext, json, type TestContext, type TestOrg } from './helpers.ts';
import { bearer, type Connection, ERAS, envelopeOf, serveMcp } from './mcp-clients.ts';

const ADMIN_TOKEN = 'admin-token-for-input-rules-test';
const STRONG_PASSWORD = 'Correct-Horse-Battery-9';

let t: TestContext;
let org: TestOrg;
/** Records the routes address by id, so a request that got past the guard would change something real. */
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestContext({ CRM_ADMIN_TOKEN: ADMIN_TOKEN }, { withoutRateLimits: true });
  org = await t.createOrg({ plan: 'enterprise' });
  const leadId = newId();
  await t.services.db.system
    .insert(leads)
    .values({ id: leadId, orgId: org.orgId, name: 'Kept', ownerId: org.ownerId });
  const member = await t.createUser(org.orgId, 'member');
  const key = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
  Object.assign(ids, { lead: leadId, user: member.userId, key: key.keyId, org: org.orgId });
});
afterAll(() => t.close());

/** What a route's path parameters are filled with: the fixture of its resource, or an unknown id. */
function fillPath(path: string): string {
  const byPrefix: [RegExp, string][] = [
    [/^\/api\/v1\/leads\//, ids.lead as string],
    [/^\/api\/v1\/users\//, ids.user as string],
    [/^\/api\/v1\/settings\/api-keys\//, ids.key as string],
    [/^\/admin\/v1\/organizations\//, ids.org as string],
  ];
  const id = byPrefix.find(([re]) => re.test(path))?.[1] ?? newId();
  return path.replace(/:index\b/, '0').replace(/:[A-Za-z]+/g, id);
}

interface BodyCase {
  /** A body the route would accept (or at least parse) without the poisoned value. */
  body: Record<string, unknown>;
  /** The string field the bad text goes into. */
  text: string;
  /** The free-form field a too-deep value goes into (defaults to `text`). */
  free?: string;
  /** The route never reads a body: anything but a 5xx will do. */
  ignoresBody?: true;
}

const NAME = { body: { name: 'Valid name' }, text: 'name' };
const NONE = { body: {}, text: 'note' };
/**
 * A valid body and its poisoned fields per write route ("METHOD path"), for every route the app
 * serves: the test below fails for a route missing here, so a new route must be added.
 */
const BODIES: Record<string, BodyCase> = {
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
  'DELETE /admin/v1/oauth-tokens/:id': { ...NONE, ignoresBody: true },
  'POST /api/v1/leads': { body: { name: 'Acme', industry: 'x' }, text: 'name', free: 'industry' },
  'POST /api/v1/leads/bulk': { body: { items: [{ name: 'Acme' }] }, text: 'note', free: 'items' },
  'POST /api/v1/leads/bulk/tags': { body: { lead_ids: [], add: ['vip'] }, text: 'note', free: 'add' },
  'PUT /api/v1/leads/:id': { body: { name: 'Acme', industry: 'x' }, text: 'name', free: 'industry' },
  'PATCH /api/v1/leads/:id': { body: { name: 'Acme', industry: 'x' }, text: 'name', free: 'industry' },
  'DELETE /api/v1/leads/:id': NONE,
  'POST /api/v1/leads/:id/convert-to-client': NONE,
  'POST /api/v1/contacts': {
    body: { lead_id: '', name: 'Cy', role_note: 'x' },
    text: 'name',
    free: 'role_note',
  },
  'PATCH /api/v1/contacts/:id': NAME,
  'PUT /api/v1/contacts/:id': NAME,
  'DELETE /api/v1/contacts/:id': NONE,
  'POST /api/v1/opportunities': { body: { lead_id: '', value: 100, note: 'n' }, text: 'note' },
  'PATCH /api/v1/opportunities/:id': { body: { note: 'n' }, text: 'note' },
  'PUT /api/v1/opportunities/:id': { body: { note: 'n' }, text: 'note' },
  'DELETE /api/v1/opportunities/:id': NONE,
  'POST /api/v1/invoices': {
    body: {
      lead_id: '',
      currency: 'USD',
      line_items: [{ description: 'Work', quantity: 1, unit_price: 10 }],
      notes: 'n',
    },
    text: 'notes',
  },
  'PATCH /api/v1/invoices/:id': { body: { notes: 'n' }, text: 'notes' },
  'PUT /api/v1/invoices/:id': { body: { notes: 'n' }, text: 'notes' },
  'DELETE /api/v1/invoices/:id': NONE,
  'POST /api/v1/invoices/:id/finalize': NONE,
  'POST /api/v1/invoices/:id/payments': { body: { amount: 10, method: 'card' }, text: 'method' },
  'POST /api/v1/invoices/:id/void': NONE,
  'POST /api/v1/invoices/:id/mark-uncollectible': NONE,
  'POST /api/v1/estimates': {
    body: {
      lead_id: '',
      currency: 'USD',
      line_items: [{ description: 'Work', quantity: 1, unit_price: 10 }],
      notes: 'n',
    },
    text: 'notes',
  },
  'PATCH /api/v1/estimates/:id': { body: { notes: 'n' }, text: 'notes' },
  'PUT /api/v1/estimates/:id': { body: { notes: 'n' }, text: 'notes' },
  'DELETE /api/v1/estimates/:id': NONE,
  'POST /api/v1/estimates/:id/send': { body: { message: 'm' }, text: 'message' },
  'POST /api/v1/estimates/:id/accept': NONE,
  'POST /api/v1/estimates/:id/decline': { body: { reason: 'r' }, text: 'reason' },
  'POST /api/v1/estimates/:id/convert-to-invoice': NONE,
  'POST /api/v1/invoices/:id/send': { body: { message: 'Hello' }, text: 'message' },
  'POST /api/v1/projects': { body: { name: 'P', currency: 'USD', description: 'd' }, text: 'description' },
  'PATCH /api/v1/projects/:id': { body: { description: 'd' }, text: 'description' },
  'PUT /api/v1/projects/:id': { body: { description: 'd' }, text: 'description' },
  'DELETE /api/v1/projects/:id': NONE,
  'POST /api/v1/projects/:id/time-entries': {
    body: { date: '2026-11-03', minutes: 5, description: 'd' },
    text: 'description',
  },
  'PATCH /api/v1/projects/:id/time-entries/:entryId': { body: { description: 'd' }, text: 'description' },
  'PUT /api/v1/projects/:id/time-entries/:entryId': { body: { description: 'd' }, text: 'description' },
  'DELETE /api/v1/projects/:id/time-entries/:entryId': NONE,
  'POST /api/v1/projects/:id/invoice': NONE,
  'POST /api/v1/project-templates': {
    body: { name: 'T', tasks: [{ text: 'Kickoff', offset_days: 0 }] },
    text: 'name',
    free: 'tasks',
  },
  'PATCH /api/v1/project-templates/:id': NAME,
  'PUT /api/v1/project-templates/:id': NAME,
  'DELETE /api/v1/project-templates/:id': NONE,
  'POST /api/v1/project-templates/:id/apply': { body: { lead_id: '' }, text: 'lead_id' },
  'POST /api/v1/proposals': {
    body: { lead_id: '', title: 'Offer', sections: [{ heading: 'Scope', body_markdown: 'Work' }] },
    text: 'title',
  },
  'PATCH /api/v1/proposals/:id': { body: { title: 'Offer' }, text: 'title' },
  'PUT /api/v1/proposals/:id': { body: { title: 'Offer' }, text: 'title' },
  'DELETE /api/v1/proposals/:id': NONE,
  'POST /api/v1/proposals/:id/send': { body: { to: 'lead@example.test' }, text: 'to' },
  'POST /api/v1/proposals/:id/expire': NONE,
  'POST /api/v1/proposal-ai/:id/suggest-questions': { ...NONE, ignoresBody: true },
  'POST /api/v1/email/schedule': {
    body: {
      to: 'lead@example.test',
      subject: 'Hello',
      body_html: '<p>Hi</p>',
      connected_account_id: '',
      lead_id: '',
      scheduled_at: '2030-01-01T00:00:00Z',
    },
    text: 'subject',
    free: 'attachments',
  },
  'DELETE /api/v1/email/scheduled/:job_id': NONE,
  'POST /api/v1/files/upload-url': {
    body: { filename: 'offer.pdf', mime_type: 'application/pdf', size_bytes: 10, purpose: 'attachment' },
    text: 'filename',
  },
  'POST /api/v1/workflows': {
    body: { name: 'Nurture', steps: [{ type: 'task', delay: { amount: 0, unit: 'days' }, text: 'Call' }] },
    text: 'name',
  },
  'PATCH /api/v1/workflows/:id': NAME,
  'PUT /api/v1/workflows/:id': NAME,
  'DELETE /api/v1/workflows/:id': NONE,
  'POST /api/v1/workflows/:id/activate': { ...NONE, ignoresBody: true },
  'POST /api/v1/workflows/:id/pause': { ...NONE, ignoresBody: true },
  'POST /api/v1/workflows/:id/enrollments': { body: { lead_id: '' }, text: 'lead_id' },
  'DELETE /api/v1/workflows/:id/enrollments/:enrollmentId': NONE,
  'POST /api/v1/activities': {
    body: { type: 'note', lead_id: '', note: 'n', values: {} },
    text: 'note',
    free: 'values',
  },
  'PATCH /api/v1/activities/:id': { body: { note: 'n', values: {} }, text: 'note', free: 'values' },
  'PUT /api/v1/activities/:id': { body: { note: 'n', values: {} }, text: 'note', free: 'values' },
  'DELETE /api/v1/activities/:id': NONE,
  'POST /api/v1/custom-activity-types': NAME,
  'PATCH /api/v1/custom-activity-types/:id': NAME,
  'PUT /api/v1/custom-activity-types/:id': NAME,
  'DELETE /api/v1/custom-activity-types/:id': NONE,
  'POST /api/v1/tasks': { body: { text: 'Call back' }, text: 'text' },
  'PATCH /api/v1/tasks/:id': { body: { text: 'Call back' }, text: 'text' },
  'PUT /api/v1/tasks/:id': { body: { text: 'Call back' }, text: 'text' },
  'DELETE /api/v1/tasks/:id': NONE,
  'POST /api/v1/tasks/:id/complete': NONE,
  'POST /api/v1/tasks/:id/snooze': { body: { until: '2030-01-01T00:00:00Z' }, text: 'until' },
  'POST /api/v1/tasks/:id/unsnooze': NONE,
  'PUT /api/v1/leads/:id/conversation-memory': { body: { summary: 'S' }, text: 'summary' },
  'POST /api/v1/leads/:id/conversation-memory/commitments': { body: { text: 'Send deck' }, text: 'text' },
  'POST /api/v1/leads/:id/conversation-memory/commitments/:index/kept': { body: { note: 'n' }, text: 'note' },
  'POST /api/v1/leads/:id/conversation-memory/commitments/:index/missed': {
    body: { note: 'n' },
    text: 'note',
  },
  'POST /api/v1/smart-views': {
    body: { name: 'View', query: { logic: 'and', filters: [] } },
    text: 'name',
    free: 'query',
  },
  'PUT /api/v1/smart-views/:id': {
    body: { name: 'View', query: { logic: 'and', filters: [] } },
    text: 'name',
    free: 'query',
  },
  'PATCH /api/v1/smart-views/:id': { body: { name: 'View' }, text: 'name', free: 'query' },
  'DELETE /api/v1/smart-views/:id': NONE,
  'POST /api/v1/custom-objects': {
    body: { name: 'Thing', fields: [{ key: 'title', label: 'Title', type: 'text' }] },
    text: 'name',
    free: 'fields',
  },
  'PATCH /api/v1/custom-objects/:id': NAME,
  'PUT /api/v1/custom-objects/:id': NAME,
  'DELETE /api/v1/custom-objects/:id': NONE,
  'POST /api/v1/custom-objects/:objectId/records': {
    body: { values: { title: 'x' } },
    text: 'note',
    free: 'values',
  },
  'PUT /api/v1/custom-objects/:objectId/records/:recordId': {
    body: { values: {} },
    text: 'note',
    free: 'values',
  },
  'PATCH /api/v1/custom-objects/:objectId/records/:recordId': {
    body: { values: {} },
    text: 'note',
    free: 'values',
  },
  'DELETE /api/v1/custom-objects/:objectId/records/:recordId': NONE,
  'POST /api/v1/users': {
    body: { email: 'dee@example.test', name: 'Dee', role: 'member', password: STRONG_PASSWORD },
    text: 'password',
  },
  'PUT /api/v1/users/:id': NAME,
  'DELETE /api/v1/users/:id': { body: { acknowledge_data_deletion: true }, text: 'note' },
  'POST /api/v1/users/:id/deactivate': NONE,
  'POST /api/v1/users/:id/reactivate': NONE,
  'POST /api/v1/settings/api-keys': {
    body: { label: 'Key', scopes: ['read:leads'] },
    text: 'label',
    free: 'scopes',
  },
  'PATCH /api/v1/settings/api-keys/:id': { body: { label: 'Key' }, text: 'label' },
  'PUT /api/v1/settings/api-keys/:id': { body: { label: 'Key' }, text: 'label' },
  'DELETE /api/v1/settings/api-keys/:id': NONE,
  'POST /api/v1/settings/api-keys/:id/rotate': NONE,
  'POST /api/v1/trash/:id/restore': NONE,
  'POST /api/v1/webhooks': {
    body: {
      name: 'Hook',
      url: 'https://example.com/hook',
      events: ['lead.created'],
      secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0',
    },
    text: 'secret',
    free: 'events',
  },
  'PUT /api/v1/webhooks/:id': { body: { url: 'https://example.com/hook' }, text: 'url', free: 'events' },
  'DELETE /api/v1/webhooks/:id': NONE,
  'POST /api/v1/webhooks/test/:id': NONE,
  'POST /api/v1/webhooks/deliveries/:deliveryId/replay': NONE,
  'POST /api/v1/connected-accounts': {
    body: {
      email: 'sam@example.com',
      display_name: 'Sam',
      smtp: { host: 'smtp.example.com', port: 587, secure: false, username: 'sam', password: 'pw' },
    },
    text: 'display_name',
  },
  'PATCH /api/v1/connected-accounts/:id': { body: { display_name: 'Sam' }, text: 'display_name' },
  'PUT /api/v1/connected-accounts/:id': { body: { display_name: 'Sam' }, text: 'display_name' },
  'DELETE /api/v1/connected-accounts/:id': NONE,
  'POST /api/v1/connected-accounts/:id/verify': NONE,
  'POST /api/v1/connected-accounts/:id/rotate-inbound-secret': NONE,
};

/** Every write route the app serves, REST table and hand-mounted auth/admin routes alike. */
function writeRoutes(): { method: string; path: string }[] {
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

function credentialFor(path: string): string {
  if (path.startsWith('/admin/')) return ADMIN_TOKEN;
  return org.token;
}

/** Every row of every table, counted; and the records requests address, read back whole. */
async function snapshot(): Promise<unknown> {
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
    lead: await db
      .select()
      .from(leads)
      .where(eq(leads.id, ids.lead as string)),
    user: await db
      .select()
      .from(users)
      .where(eq(users.id, ids.user as string)),
    key: await db
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.id, ids.key as string)),
  };
}

describe('unsafe input in request bodies', () => {
  it('has a valid body for every write route the app serves', () => {
    const missing = writeRoutes()
      .map((r) => `${r.method} ${r.path}`)
      .filter((key) => !(key in BODIES));
    expect(missing).toEqual([]);
  });

  it('answers every write route, auth and admin route included, 400 naming the field, and stores nothing', async () => {
    const before = await snapshot();
    const failures: string[] = [];
    for (const route of writeRoutes()) {
      const c = BODIES[`${route.method} ${route.path}`] as BodyCase;
      for (const bad of BAD_BODIES) {
        const res = await t.app.request(fillPath(route.path), {
          method: route.method,
          headers: {
            authorization: `Bearer ${credentialFor(route.path)}`,
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
    expect(await snapshot()).toEqual(before);
  });
});

describe('unsafe input in URLs', () => {
  const BAD_QUERIES: { label: string; query: string; code: string }[] = [
    { label: 'an encoded NUL', query: 'a%00b', code: SAFE_INPUT_CODES.nul },
    { label: 'an encoded lone surrogate (not UTF-8)', query: '%ED%A0%80', code: SAFE_INPUT_CODES.encoding },
    { label: 'malformed percent-encoding', query: '%E0%A4%A', code: SAFE_INPUT_CODES.encoding },
    { label: 'a stray percent sign', query: '100%', code: SAFE_INPUT_CODES.encoding },
  ];

  it('answers a bad query value or path parameter on every route 400, on GET routes too', async () => {
    const failures: string[] = [];
    const routes = t.app.routes.filter(
      (r) => r.method !== 'ALL' && (r.path.startsWith('/api/v1/') || r.path.startsWith('/admin/v1/')),
    );
    for (const route of routes) {
      for (const bad of BAD_QUERIES) {
        const urls = [`${fillPath(route.path)}?q=${bad.query}`];
        if (route.path.includes(':'))
          urls.push(route.path.replace(/:[A-Za-z]+/, bad.query).replace(/:[A-Za-z]+/g, newId()));
        for (const url of urls) {
          const res = await t.app.request(url, {
            method: route.method,
            headers: {
              authorization: `Bearer ${credentialFor(route.path)}`,
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
  let url: URL;
  let stop: () => Promise<void>;
  let mcp: Connection;
  const headers = () => ({ ...bearer(org.token), 'x-mcp-toolsets': 'all' });

  beforeAll(async () => {
    ({ url, stop } = await serveMcp(t));
    mcp = await (ERAS[0] as (typeof ERAS)[number]).connect(url, headers());
  });
  afterAll(async () => {
    await mcp.close();
    await stop();
  });

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

  it('answers every write tool an isError validation result naming the field, and stores nothing', async () => {
    const before = await snapshot();
    const failures: string[] = [];
    for (const tool of writeTools) {
      for (const bad of BAD_ARGS) {
        const result = await mcp.callTool(tool.name, { id: ids.lead, ...bad.args });
        const envelope = result.isError ? envelopeOf(result) : undefined;
        const named = envelope?.details?.some((d) => d.code === bad.code && names(d.field, bad.field));
        if (envelope?.code !== 'validation_failed' || !named) {
          failures.push(`${tool.name} with ${bad.label}: ${JSON.stringify(result)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('answers tool calls carrying 1e309 or JSON 5,000 deep (no client library sends them) the same way', async () => {
    const failures: string[] = [];
    const RAW: [string, string][] = [
      ['1e309', SAFE_INPUT_CODES.number],
      [nestedText(5000), SAFE_INPUT_CODES.depth],
    ];
    for (const tool of writeTools)
      for (const [raw, code] of RAW) {
        const res = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
            ...headers(),
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
