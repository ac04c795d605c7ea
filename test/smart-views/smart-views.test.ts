// Locks in smart views over REST: CRUD, private/shared visibility, roles, plan gating, validation details, and results per field_type (incl. activity filters), sort, display columns and paging.
import { describe, expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { smartViews } from '../../tools/smart-views/tables.ts';
import { seedActivities } from '../activities/seed.ts';
import { seedContacts } from '../contacts/seed.ts';
import { seedCustomActivityTypes } from '../custom-activity-types/seed.ts';
import {
  type Caller,
  fileTest,
  readError,
  readOutput,
  type SmartView,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { type LeadSeed, seedLeads } from '../leads/seed.ts';
import { seedOpportunities } from '../opportunities/seed.ts';
import { seedTasks } from '../tasks/seed.ts';

/** Lead ids by a short name, for readable expectations. */
const ids: Record<string, string> = {};
let customTypeId = '';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'starter' });

test.beforeAll(async ({ t, org, other }) => {
  await seed(t, org, other);
});

let clock = Date.parse('2026-01-01T00:00:00Z');
function nextTime(): Date {
  clock += 60_000;
  return new Date(clock);
}

async function insertLead(
  t: TestContext,
  org: TestOrg,
  key: string,
  values: Partial<LeadSeed> = {},
  orgId = org.orgId,
): Promise<string> {
  const id = newId();
  const at = nextTime();
  await seedLeads(t, orgId, [
    { id, name: key, ownerId: org.ownerId, createdAt: at, updatedAt: at, ...values },
  ]);
  ids[key] = id;
  return id;
}

/** Leads a..h with children chosen so each field_type has a distinct answer. */
async function seed(t: TestContext, org: TestOrg, other: TestOrg): Promise<void> {
  await insertLead(t, org, 'Acme', {
    status: 'qualified',
    tags: ['vip', 'eu'],
    custom: { size: 50, region: 'North' },
  });
  await insertLead(t, org, 'Beta 100%', { status: 'new', tags: ['eu'], custom: { size: 5, active: true } });
  await insertLead(t, org, 'Gamma_x', {
    status: 'contacted',
    description: 'big deal',
    custom: { size: '50' },
  });
  await insertLead(t, org, 'Delta', { status: 'lost', ownerId: null, custom: { region: '' } });
  await insertLead(t, org, 'Trashed', { status: 'qualified', deletedAt: new Date() });
  await insertLead(t, org, 'Foreign', { status: 'qualified' }, other.orgId);

  await seedContacts(t, org.orgId, [
    {
      leadId: ids.Acme ?? '',
      name: 'Ann Smith',
      title: 'CEO',
      emails: [{ email: 'ann@acme.test', type: 'work' }],
      phones: [],
    },
    {
      leadId: ids['Beta 100%'] ?? '',
      name: 'Bob',
      emails: [],
      phones: [{ phone: '+1 555 0100', type: 'mobile' }],
    },
    // A trashed contact never counts.
    {
      leadId: ids.Delta ?? '',
      name: 'Ann Gone',
      emails: [{ email: 'ann@delta.test', type: 'work' }],
      deletedAt: new Date(),
    },
  ]);
  await seedOpportunities(t, org.orgId, [
    {
      leadId: ids.Acme ?? '',
      value: 12_000.5,
      confidence: 80,
      status: 'active',
      expectedCloseDate: '2026-03-01',
    },
    {
      leadId: ids.Gamma_x ?? '',
      value: 500,
      confidence: 20,
      status: 'won',
    },
  ]);
  await seedTasks(t, org.orgId, [
    { leadId: ids.Delta ?? '', text: 'Call back', isComplete: false },
    {
      leadId: ids.Acme ?? '',
      text: 'Send proposal',
      isComplete: true,
      dueAt: new Date('2026-02-01T00:00:00Z'),
    },
  ]);
  customTypeId = newId();
  await seedCustomActivityTypes(t, org.orgId, [
    {
      id: customTypeId,
      name: 'Site visit',
      fields: [{ key: 'rating', label: 'Rating', type: 'number', required: false }],
    },
  ]);
  await seedActivities(t, org.orgId, [
    {
      leadId: ids.Acme ?? '',
      type: 'call',
      fields: { direction: 'outbound', status: 'completed', duration_seconds: 300, outcome: 'connected' },
      occurredAt: new Date('2026-01-10T10:00:00Z'),
    },
    {
      leadId: ids['Beta 100%'] ?? '',
      type: 'call',
      fields: { direction: 'inbound', status: 'completed', duration_seconds: 30, outcome: 'no_answer' },
      occurredAt: new Date('2026-01-12T10:00:00Z'),
    },
    {
      leadId: ids.Gamma_x ?? '',
      type: 'note',
      fields: { note: 'hello' },
    },
    {
      leadId: ids.Delta ?? '',
      type: 'custom',
      customActivityTypeId: customTypeId,
      fields: { rating: 4 },
    },
    // Trashed: Gamma has no live meeting.
    { leadId: ids.Gamma_x ?? '', type: 'meeting', deletedAt: new Date() },
  ]);
}

function filter(
  fieldType: string,
  field: string,
  op: string,
  value?: unknown,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: `f${Math.random().toString(36).slice(2, 8)}`,
    field_type: fieldType,
    field,
    op,
    value,
    ...extra,
  };
}

/** create_smart_view with a body built from untyped filters (filter() above); the answer parsed. */
async function createView(
  t: TestContext,
  org: TestOrg,
  body: Record<string, unknown>,
  as: Caller = org,
): Promise<SmartView> {
  const res = await t.request('POST', '/api/v1/smart-views', { token: as.token, body });
  return (await readOutput(res, TOOL.create_smart_view, 201)).smart_view;
}

async function results(t: TestContext, org: TestOrg, id: string, query = '', as: Caller = org) {
  const res = await t.request('GET', `/api/v1/smart-views/${id}/results${query}`, { token: as.token });
  return readOutput(res, TOOL.run_smart_view);
}

/** Names of the leads matching the filters, sorted. */
async function matching(
  t: TestContext,
  org: TestOrg,
  filters: Record<string, unknown>[],
  logic = 'and',
): Promise<string[]> {
  const view = await createView(t, org, { name: 'probe', query: { filters, logic } });
  const page = await results(t, org, view._id, '?limit=100');
  return page.leads.map((l) => String(l.name)).sort();
}

describe('CRUD', () => {
  test('creates with defaults, reads, lists, updates (PUT and PATCH merge) and deletes', async ({
    t,
    org,
  }) => {
    const view = await createView(t, org, {
      name: 'Hot leads',
      query: { filters: [filter('lead', 'status', 'eq', 'qualified')], logic: 'and' },
    });
    expect(view).toMatchObject({
      name: 'Hot leads',
      scope: 'leads',
      visibility: 'private',
      sort: null,
      display_columns: [],
      owner_id: org.ownerId,
    });
    const got = await t.request('GET', `/api/v1/smart-views/${view._id}`, { token: org.token });
    expect(got.status).toBe(200);
    expect((await readOutput(got, TOOL.get_smart_view)).smart_view).toEqual(view);

    const put = await t.request('PUT', `/api/v1/smart-views/${view._id}`, {
      token: org.token,
      body: { name: 'Renamed', sort: { field: 'name', direction: 1 } },
    });
    expect(put.status).toBe(200);
    const updated = (await readOutput(put, TOOL.update_smart_view)).smart_view;
    expect(updated.name).toBe('Renamed');
    expect(updated.sort).toEqual({ field: 'name', direction: 1 });
    expect(updated.query).toEqual(view.query);

    const patch = await t.request('PATCH', `/api/v1/smart-views/${view._id}`, {
      token: org.token,
      body: { sort: null, visibility: 'shared' },
    });
    expect(patch.status).toBe(200);
    expect((await readOutput(patch, TOOL.update_smart_view)).smart_view).toMatchObject({
      name: 'Renamed',
      sort: null,
      visibility: 'shared',
    });

    const listed = await readOutput(
      await t.request('GET', '/api/v1/smart-views?search=renamed', { token: org.token }),
      TOOL.list_smart_views,
    );
    expect(listed.smart_views.map((v) => v._id)).toContain(view._id);

    const del = await t.request('DELETE', `/api/v1/smart-views/${view._id}`, { token: org.token });
    expect(del.status).toBe(200);
    expect(await readOutput(del, TOOL.delete_smart_view)).toEqual({ message: 'Smart view deleted' });
    const gone = await t.request('GET', `/api/v1/smart-views/${view._id}`, { token: org.token });
    expect(gone.status).toBe(404);
  });

  test('pages the list and refuses limit above 100', async ({ t, org }) => {
    const fresh = await t.createOrg({ plan: 'starter' });
    for (let i = 0; i < 3; i++) {
      await createView(t, org, { name: `V${i}`, query: { filters: [], logic: 'and' } }, fresh);
    }
    const res = await t.request('GET', '/api/v1/smart-views?limit=2&page=2&sort=name', {
      token: fresh.token,
    });
    const body = await readOutput(res, TOOL.list_smart_views);
    expect(body).toMatchObject({ total: 3, totalPages: 2, page: 2 });
    expect(body.smart_views.map((v) => v.name)).toEqual(['V2']);
    const tooMany = await t.request('GET', '/api/v1/smart-views?limit=101', { token: fresh.token });
    expect(tooMany.status).toBe(400);
  });
});

describe('visibility and roles', () => {
  test("hides other users' private views, shows shared ones, and limits who may change them", async ({
    t,
    org,
  }) => {
    const member = await t.createUser(org.orgId, 'member');
    const manager = await t.createUser(org.orgId, 'manager');
    const viewer = await t.createUser(org.orgId, 'viewer');
    const query = { filters: [], logic: 'and' };
    const mine = await createView(t, org, { name: 'Mine', query }, member);
    const shared = await createView(t, org, { name: 'Shared', query, visibility: 'shared' }, member);

    // The owner of the organization does not see the member's private view.
    for (const path of [`/api/v1/smart-views/${mine._id}`, `/api/v1/smart-views/${mine._id}/results`]) {
      expect((await t.request('GET', path, { token: org.token })).status).toBe(404);
    }
    const ownerList = await readOutput(
      await t.request('GET', '/api/v1/smart-views?limit=100', { token: org.token }),
      TOOL.list_smart_views,
    );
    expect(ownerList.smart_views.map((v) => v._id)).toContain(shared._id);
    expect(ownerList.smart_views.map((v) => v._id)).not.toContain(mine._id);
    expect(
      (await t.request('GET', `/api/v1/smart-views/${shared._id}/results`, { token: viewer.token })).status,
    ).toBe(200);

    // Viewers cannot write at all.
    const viewerCreate = await t.request('POST', '/api/v1/smart-views', {
      token: viewer.token,
      body: { name: 'x', query },
    });
    expect(viewerCreate.status).toBe(403);
    expect(await readError(viewerCreate, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'smart_views.create',
    });

    // Another member may not change the shared view; a manager (manage_shared) may.
    const member2 = await t.createUser(org.orgId, 'member');
    const denied = await t.request('PATCH', `/api/v1/smart-views/${shared._id}`, {
      token: member2.token,
      body: { name: 'Hijacked' },
    });
    expect(denied.status).toBe(403);
    expect(await readError(denied, 403)).toMatchObject({ required_permission: 'smart_views.manage_shared' });
    expect(
      (await t.request('DELETE', `/api/v1/smart-views/${shared._id}`, { token: member2.token })).status,
    ).toBe(403);
    const managed = await t.request('PATCH', `/api/v1/smart-views/${shared._id}`, {
      token: manager.token,
      body: { name: 'Tidied' },
    });
    expect(managed.status).toBe(200);
    // Only the creator changes visibility.
    const hide = await t.request('PATCH', `/api/v1/smart-views/${shared._id}`, {
      token: manager.token,
      body: { visibility: 'private' },
    });
    expect(hide.status).toBe(403);
    expect(
      (await t.request('DELETE', `/api/v1/smart-views/${shared._id}`, { token: manager.token })).status,
    ).toBe(200);
    // The member edits and deletes their own private view.
    expect(
      (
        await t.request('PUT', `/api/v1/smart-views/${mine._id}`, {
          token: member.token,
          body: { name: 'M2' },
        })
      ).status,
    ).toBe(200);
    expect(
      (await t.request('DELETE', `/api/v1/smart-views/${mine._id}`, { token: member.token })).status,
    ).toBe(200);
  });

  test("answers 404 for another organization's view", async ({ t, org, other }) => {
    const view = await createView(
      t,
      org,
      { name: 'Theirs', query: { filters: [], logic: 'and' }, visibility: 'shared' },
      other,
    );
    expect((await t.request('GET', `/api/v1/smart-views/${view._id}`, { token: org.token })).status).toBe(
      404,
    );
    expect(
      (await t.request('GET', `/api/v1/smart-views/${view._id}/results`, { token: org.token })).status,
    ).toBe(404);
  });

  test('needs the smart_views feature (402 on free) and read:leads for results', async ({ t, org }) => {
    const free = await t.createOrg({ plan: 'free' });
    const res = await t.request('POST', '/api/v1/smart-views', {
      token: free.token,
      body: { name: 'x', query: { filters: [], logic: 'and' } },
    });
    expect(res.status).toBe(402);
    expect(await readError(res, 402)).toMatchObject({
      error: 'plan_upgrade_required',
      feature: 'smart_views',
      current_plan: 'free',
    });
    expect((await t.request('GET', '/api/v1/smart-views', { token: free.token })).status).toBe(402);

    const view = await createView(t, org, { name: 'Scoped', query: { filters: [], logic: 'and' } });
    const noLeads = await t.createPat(org.orgId, org.ownerId, ['read:contacts']);
    expect(
      (await t.request('GET', `/api/v1/smart-views/${view._id}/results`, { token: noLeads.token })).status,
    ).toBe(403);
    const readLeads = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect(
      (await t.request('GET', `/api/v1/smart-views/${view._id}/results`, { token: readLeads.token })).status,
    ).toBe(200);
  });
});

describe('validation', () => {
  async function detailsOf(t: TestContext, org: TestOrg, body: Record<string, unknown>): Promise<string[]> {
    const res = await t.request('POST', '/api/v1/smart-views', { token: org.token, body });
    expect(res.status).toBe(400);
    const error = await readError(res, 400);
    return (error.details ?? []).map((d) => d.field);
  }
  const q = (...filters: Record<string, unknown>[]) => ({ name: 'v', query: { filters, logic: 'and' } });

  test('reports field-level problems', async ({ t, org }) => {
    expect(await detailsOf(t, org, { query: { filters: [], logic: 'and' } })).toContain('name');
    expect(await detailsOf(t, org, { name: 'v', query: { filters: [] } })).toContain('query.logic');
    expect(await detailsOf(t, org, { name: 'v', query: { filters: [], logic: 'xor' } })).toContain(
      'query.logic',
    );
    expect(await detailsOf(t, org, { ...q(), scope: 'contacts' })).toContain('scope');
    expect(await detailsOf(t, org, { ...q(), visibility: 'public' })).toContain('visibility');
    expect(await detailsOf(t, org, q(filter('lead', 'nope', 'eq', 'x')))).toContain('query.filters.0.field');
    expect(await detailsOf(t, org, q(filter('lead', 'name', 'gt', 'x')))).toContain('query.filters.0.op');
    expect(await detailsOf(t, org, q(filter('opportunity', 'value', 'contains', '1')))).toContain(
      'query.filters.0.op',
    );
    expect(await detailsOf(t, org, q(filter('opportunity', 'value', 'eq', '1')))).toContain(
      'query.filters.0.value',
    );
    expect(await detailsOf(t, org, q(filter('lead', 'status', 'in', [])))).toContain('query.filters.0.value');
    expect(await detailsOf(t, org, q(filter('lead', 'status', 'in', Array(501).fill('x'))))).toContain(
      'query.filters.0.value',
    );
    expect(await detailsOf(t, org, q(filter('opportunity', 'value', 'between', [5])))).toContain(
      'query.filters.0.value',
    );
    expect(await detailsOf(t, org, q(filter('opportunity', 'value', 'between', [5, 1])))).toContain(
      'query.filters.0.value',
    );
    expect(await detailsOf(t, org, q(filter('lead', 'name', 'is_empty', 'x')))).toContain(
      'query.filters.0.value',
    );
    expect(await detailsOf(t, org, q(filter('lead', 'created_at', 'gt', '2026-02-30')))).toContain(
      'query.filters.0.value',
    );
    expect(await detailsOf(t, org, q(filter('lead', 'created_at', 'gt', 'yesterday')))).toContain(
      'query.filters.0.value',
    );
    expect(
      await detailsOf(t, org, q(filter('opportunity', 'expected_close_date', 'eq', '2026-13-01'))),
    ).toContain('query.filters.0.value');
    expect(await detailsOf(t, org, q(filter('custom_field', 'bad key', 'eq', 'x')))).toContain(
      'query.filters.0.field',
    );
    expect(await detailsOf(t, org, q(filter('custom_field', 'size', 'gt', 'x')))).toContain(
      'query.filters.0.value',
    );
    expect(await detailsOf(t, org, q(filter('activity', 'activity', 'is_not_empty')))).toContain(
      'query.filters.0.activity_type',
    );
    expect(
      await detailsOf(t, org, q(filter('activity', 'activity', 'eq', 'x', { activity_type: 'call' }))),
    ).toContain('query.filters.0.op');
    expect(
      await detailsOf(
        t,
        org,
        q(filter('activity', 'activity', 'is_not_empty', undefined, { activity_type: 'fax' })),
      ),
    ).toContain('query.filters.0.activity_type');
    expect(
      await detailsOf(
        t,
        org,
        q(filter('activity', 'activity', 'is_not_empty', undefined, { activity_type: newId() })),
      ),
    ).toContain('query.filters.0.activity_type');
    expect(
      await detailsOf(t, org, q(filter('lead', 'name', 'eq', 'x', { activity_type: 'call' }))),
    ).toContain('query.filters.0.activity_type');
    expect(await detailsOf(t, org, q(filter('lead', 'name', 'eq', 'a\u0000b')))).toContain(
      'query.filters.0.value',
    );
    expect(
      await detailsOf(
        t,
        org,
        q(
          { ...filter('lead', 'name', 'eq', 'x'), id: 'a' },
          { ...filter('lead', 'name', 'eq', 'y'), id: 'a' },
        ),
      ),
    ).toContain('query.filters.1.id');
    expect(await detailsOf(t, org, { ...q(), sort: { field: 'tags', direction: 1 } })).toContain(
      'sort.field',
    );
    expect(await detailsOf(t, org, { ...q(), sort: { field: 'name', direction: 2 } })).toContain(
      'sort.direction',
    );
    expect(await detailsOf(t, org, { ...q(), display_columns: ['_secret'] })).toContain('display_columns.0');
    expect(
      await detailsOf(t, org, {
        name: 'v',
        query: {
          filters: Array.from({ length: 51 }, (_, i) => ({
            ...filter('lead', 'name', 'eq', 'x'),
            id: `f${i}`,
          })),
          logic: 'and',
        },
      }),
    ).toContain('query.filters');
  });
});

describe('results', () => {
  test('filters on lead fields', async ({ t, org }) => {
    expect(await matching(t, org, [filter('lead', 'status', 'eq', 'QUALIFIED')])).toEqual(['Acme']);
    expect(await matching(t, org, [filter('lead', 'status', 'neq', 'qualified')])).toEqual([
      'Beta 100%',
      'Delta',
      'Gamma_x',
    ]);
    expect(await matching(t, org, [filter('lead', 'name', 'contains', '%')])).toEqual(['Beta 100%']);
    expect(await matching(t, org, [filter('lead', 'name', 'contains', '_')])).toEqual(['Gamma_x']);
    expect(await matching(t, org, [filter('lead', 'name', 'starts_with', 'de')])).toEqual(['Delta']);
    expect(await matching(t, org, [filter('lead', 'tags', 'contains', 'vip')])).toEqual(['Acme']);
    expect(await matching(t, org, [filter('lead', 'tags', 'in', ['eu', 'x'])])).toEqual([
      'Acme',
      'Beta 100%',
    ]);
    expect(await matching(t, org, [filter('lead', 'tags', 'is_empty')])).toEqual(['Delta', 'Gamma_x']);
    expect(await matching(t, org, [filter('lead', 'owner_id', 'is_empty')])).toEqual(['Delta']);
    expect(await matching(t, org, [filter('lead', 'description', 'is_not_empty')])).toEqual(['Gamma_x']);
    expect(await matching(t, org, [filter('lead', 'status', 'in', ['new', 'lost'])])).toEqual([
      'Beta 100%',
      'Delta',
    ]);
    expect(await matching(t, org, [filter('lead', 'created_at', 'gt', '2026-01-01T00:02:30Z')])).toEqual([
      'Delta',
      'Gamma_x',
    ]);
  });

  test('filters on custom fields by the type of the value', async ({ t, org }) => {
    expect(await matching(t, org, [filter('custom_field', 'size', 'eq', 50)])).toEqual(['Acme']);
    expect(await matching(t, org, [filter('custom_field', 'size', 'eq', '50')])).toEqual(['Gamma_x']);
    expect(await matching(t, org, [filter('custom_field', 'size', 'gte', 5)])).toEqual(['Acme', 'Beta 100%']);
    expect(await matching(t, org, [filter('custom_field', 'size', 'between', [1, 10])])).toEqual([
      'Beta 100%',
    ]);
    expect(await matching(t, org, [filter('custom_field', 'active', 'eq', true)])).toEqual(['Beta 100%']);
    expect(await matching(t, org, [filter('custom_field', 'region', 'is_empty')])).toEqual([
      'Beta 100%',
      'Delta',
      'Gamma_x',
    ]);
    expect(await matching(t, org, [filter('custom_field', 'region', 'in', ['north', 7])])).toEqual(['Acme']);
  });

  test('filters on contacts, opportunities and tasks (live ones only)', async ({ t, org }) => {
    expect(await matching(t, org, [filter('contact', 'name', 'starts_with', 'ann')])).toEqual(['Acme']);
    expect(await matching(t, org, [filter('contact', 'email', 'contains', '@acme')])).toEqual(['Acme']);
    expect(await matching(t, org, [filter('contact', 'email', 'is_empty')])).toEqual(['Beta 100%']);
    expect(await matching(t, org, [filter('contact', 'phone', 'contains', '555')])).toEqual(['Beta 100%']);
    expect(await matching(t, org, [filter('opportunity', 'value', 'gt', 1000)])).toEqual(['Acme']);
    expect(await matching(t, org, [filter('opportunity', 'status', 'in', ['won', 'lost'])])).toEqual([
      'Gamma_x',
    ]);
    expect(
      await matching(t, org, [filter('opportunity', 'expected_close_date', 'lte', '2026-03-01')]),
    ).toEqual(['Acme']);
    expect(await matching(t, org, [filter('task', 'is_complete', 'eq', false)])).toEqual(['Delta']);
    expect(
      await matching(t, org, [filter('task', 'due_at', 'between', ['2026-01-15', '2026-02-15'])]),
    ).toEqual(['Acme']);
  });

  test('filters on activities by type and field', async ({ t, org }) => {
    const has = (type: string, extra: Record<string, unknown> = {}) =>
      filter('activity', 'activity', 'is_not_empty', undefined, { activity_type: type, ...extra });
    expect(await matching(t, org, [has('call')])).toEqual(['Acme', 'Beta 100%']);
    expect(await matching(t, org, [has('meeting')])).toEqual([]);
    expect(
      await matching(t, org, [
        filter('activity', 'activity', 'is_empty', undefined, { activity_type: 'call' }),
      ]),
    ).toEqual(['Delta', 'Gamma_x']);
    expect(
      await matching(t, org, [
        filter('activity', 'outcome', 'eq', undefined, {
          activity_type: 'call',
          activity_field: 'outcome',
          activity_field_value: 'connected',
        }),
      ]),
    ).toEqual(['Acme']);
    expect(
      await matching(t, org, [
        filter('activity', 'activity', 'gte', undefined, {
          activity_type: 'call',
          activity_field: 'duration_seconds',
          activity_field_value: 60,
        }),
      ]),
    ).toEqual(['Acme']);
    expect(
      await matching(t, org, [
        filter('activity', 'activity', 'gt', undefined, {
          activity_type: 'call',
          activity_field: 'occurred_at',
          activity_field_value: '2026-01-11',
        }),
      ]),
    ).toEqual(['Beta 100%']);
    expect(await matching(t, org, [has(customTypeId)])).toEqual(['Delta']);
    expect(
      await matching(t, org, [
        filter('activity', 'rating', 'lt', undefined, {
          activity_type: customTypeId,
          activity_field: 'rating',
          activity_field_value: 3,
        }),
      ]),
    ).toEqual([]);
  });

  test('combines filters with and / or', async ({ t, org }) => {
    const a = filter('lead', 'tags', 'contains', 'eu');
    const b = filter('activity', 'activity', 'is_not_empty', undefined, { activity_type: 'note' });
    expect(await matching(t, org, [a, b], 'and')).toEqual([]);
    expect(await matching(t, org, [a, b], 'or')).toEqual(['Acme', 'Beta 100%', 'Gamma_x']);
    expect(await matching(t, org, [], 'or')).toEqual(['Acme', 'Beta 100%', 'Delta', 'Gamma_x']);
  });

  test('sorts, reduces to display columns and pages', async ({ t, org }) => {
    const view = await createView(t, org, {
      name: 'Sorted',
      query: { filters: [], logic: 'and' },
      sort: { field: 'size', direction: -1 },
      display_columns: ['status', 'size', 'missing'],
    });
    const first = await results(t, org, view._id, '?limit=2');
    expect(first).toMatchObject({ total: 4, page: 1, limit: 2, totalPages: 2 });
    // Numbers sort among themselves (jsonb order puts numbers above strings); missing values last.
    expect(first.leads).toEqual([
      { _id: ids.Acme, name: 'Acme', status: 'qualified', size: 50, missing: null },
      { _id: ids['Beta 100%'], name: 'Beta 100%', status: 'new', size: 5, missing: null },
    ]);
    const second = await results(t, org, view._id, '?limit=2&page=2');
    expect(second.leads.map((l) => l.name)).toEqual(['Gamma_x', 'Delta']);

    const byName = await createView(t, org, {
      name: 'By name',
      query: { filters: [], logic: 'and' },
      sort: { field: 'name', direction: 1 },
    });
    const named = await results(t, org, byName._id);
    expect(named.leads.map((l) => l.name)).toEqual(['Acme', 'Beta 100%', 'Delta', 'Gamma_x']);
    expect(named.leads[0]).toMatchObject({ _id: ids.Acme, tags: ['vip', 'eu'], size: 50, region: 'North' });

    const byDefault = await createView(t, org, { name: 'Default', query: { filters: [], logic: 'and' } });
    expect((await results(t, org, byDefault._id)).leads.map((l) => l.name)).toEqual([
      'Delta',
      'Gamma_x',
      'Beta 100%',
      'Acme',
    ]);
    expect(
      (await t.request('GET', `/api/v1/smart-views/${byDefault._id}/results?limit=101`, { token: org.token }))
        .status,
    ).toBe(400);
  });

  test('leaves the stored view rows intact', async ({ t }) => {
    const rows = await t.services.db.system.select().from(smartViews);
    expect(rows.length).toBeGreaterThan(0);
  });
});
