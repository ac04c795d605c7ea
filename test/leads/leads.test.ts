// Locks in the leads slice over REST: CRUD with additional properties, PUT/PATCH semantics, list paging/sort/search/filters, conversion, bulk operations, outbox events and access rules.
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents, users } from '../../core/db/schema.ts';
import { messageOutput } from '../../core/schemas.ts';
import { leads } from '../../tools/leads/tables.ts';
import {
  type Caller,
  createLead,
  detailFields,
  outboxCount,
  eventsOf as outboxEventsOf,
  readError,
  readOk,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
  test,
} from '../fixtures/index.ts';

async function list(t: TestContext, org: TestOrg, query: string, as: Caller = org) {
  const res = await t.request('GET', `/api/v1/leads${query}`, { token: as.token });
  return readOutput(res, TOOL.list_leads);
}

/** Outbox rows of one lead, oldest first. */
const eventsOf = (t: TestContext, leadId: string) => outboxEventsOf(t, leadId);

describe('create and get', () => {
  test('creates a lead with defaults, keeps additional properties and returns them on get', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org, {
      name: 'Acme Corp',
      description: 'Makes anvils',
      url: 'https://acme.example',
      tags: ['b2b', 'anvils', 'b2b'],
      industry: 'Manufacturing',
      employees: 250,
      hq: { city: 'Phoenix', country: 'US' },
      segments: ['smb', 1, true],
      verified: false,
    });
    expect(lead).toMatchObject({
      name: 'Acme Corp',
      description: 'Makes anvils',
      url: 'https://acme.example',
      status: 'new',
      owner_id: org.ownerId,
      created_by: org.ownerId,
      converted_at: null,
      tags: ['b2b', 'anvils'],
      industry: 'Manufacturing',
      employees: 250,
      hq: { city: 'Phoenix', country: 'US' },
      segments: ['smb', 1, true],
      verified: false,
    });
    expect(lead._id).toMatch(/^[0-9a-f]{24}$/);
    expect(lead).not.toHaveProperty('custom');
    expect(lead).not.toHaveProperty('org_id');

    const res = await t.request('GET', `/api/v1/leads/${lead._id}`, { token: org.token });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.get_lead)).lead).toEqual(lead);

    const events = await eventsOf(t, lead._id);
    expect(events.map((e) => e.event)).toEqual(['lead.created']);
    expect(events[0]?.data).toMatchObject({ _id: lead._id, name: 'Acme Corp', industry: 'Manufacturing' });
  });

  test('assigns another active user of the organization as owner', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const lead = await createLead(t, org, { name: 'Owned Elsewhere', owner_id: member.userId });
    expect(lead.owner_id).toBe(member.userId);
    expect(lead.created_by).toBe(org.ownerId);
  });

  test('rejects invalid fields, reserved and malformed property names with details, writing no event', async ({
    t,
    org,
    other,
  }) => {
    const before = await outboxCount(t, org.orgId);
    const cases: [Record<string, unknown>, string][] = [
      [{ description: 'no name' }, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(501) }, 'name'],
      [{ name: 'A', url: 'ftp://files.example' }, 'url'],
      [{ name: 'A', url: 'not a url' }, 'url'],
      [{ name: 'A', status: 'won' }, 'status'],
      [{ name: 'A', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'tags'],
      [{ name: 'A', created_at: '2020-01-01T00:00:00Z' }, 'created_at'],
      [{ name: 'A', _id: '0123456789abcdef01234567' }, '_id'],
      [{ name: 'A', org_id: other.orgId }, 'org_id'],
      [{ name: 'A', custom: { a: 1 } }, 'custom'],
      [{ name: 'A', 'bad-key': 1 }, 'bad-key'],
      [{ name: 'A', '1st': 1 }, '1st'],
      [{ name: 'A', owner_id: 'nope' }, 'owner_id'],
    ];
    for (const [body, field] of cases) {
      const res = await t.request('POST', '/api/v1/leads', { token: org.token, body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const err = await readError(res, 400);
      expect(err.error).toBe('Validation failed');
      expect(detailFields(err)).toContain(field);
    }
    const reserved = await readError(
      await t.request('POST', '/api/v1/leads', { token: org.token, body: { name: 'A', deleted_at: null } }),
      400,
    );
    expect(reserved.details?.find((d) => d.field === 'deleted_at')?.message).toMatch(/reserved/);
    expect(await outboxCount(t, org.orgId)).toBe(before);
  });

  test('reports a reserved key together with other invalid fields', async ({ t, org }) => {
    const res = await t.request('POST', '/api/v1/leads', {
      token: org.token,
      body: { name: '', updated_at: 'x' },
    });
    expect(res.status).toBe(400);
    expect(detailFields(await readError(res, 400)).sort()).toEqual(['name', 'updated_at']);
  });

  test('limits additional properties to 100', async ({ t, org }) => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
    const res = await t.request('POST', '/api/v1/leads', {
      token: org.token,
      body: { name: 'Many', ...many },
    });
    expect(res.status).toBe(400);
    expect((await readError(res, 400)).details?.[0]?.message).toMatch(/at most 100/);
    const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
    const lead = await createLead(t, org, { name: 'Hundred', ...hundred });
    expect(lead.k99).toBe(99);
  });

  test('refuses an owner from another organization or a deactivated user', async ({ t, org, other }) => {
    const deactivated = await t.createUser(org.orgId, 'member');
    await t.services.db.system
      .update(users)
      .set({ status: 'deactivated', deactivatedAt: new Date() })
      .where(eq(users.id, deactivated.userId));
    for (const ownerId of [other.ownerId, deactivated.userId, '0123456789abcdef01234567']) {
      const res = await t.request('POST', '/api/v1/leads', {
        token: org.token,
        body: { name: 'Bad owner', owner_id: ownerId },
      });
      expect(res.status).toBe(400);
      const err = await readError(res, 400);
      expect(err.details).toEqual([expect.objectContaining({ field: 'owner_id' })]);
    }
  });
});

describe('replace (PUT) and update (PATCH)', () => {
  test('PATCH changes only sent fields, merges properties and removes those sent as null', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org, {
      name: 'Patchy',
      description: 'keep me',
      status: 'contacted',
      tags: ['x'],
      color: 'red',
      size: 3,
    });
    const res = await t.request('PATCH', `/api/v1/leads/${lead._id}`, {
      token: org.token,
      body: { name: 'Patchy Ltd', size: null, region: 'EU' },
    });
    expect(res.status).toBe(200);
    const updated = (await readOutput(res, TOOL.update_lead)).lead;
    expect(updated).toMatchObject({
      name: 'Patchy Ltd',
      description: 'keep me',
      status: 'contacted',
      tags: ['x'],
      color: 'red',
      region: 'EU',
    });
    expect(updated).not.toHaveProperty('size');
    expect(Date.parse(updated.updated_at)).toBeGreaterThanOrEqual(Date.parse(lead.updated_at));

    const events = await eventsOf(t, lead._id);
    expect(events.map((e) => e.event)).toEqual(['lead.created', 'lead.updated']);
    expect(events[1]?.data).toMatchObject({
      name: 'Patchy Ltd',
      region: 'EU',
      changed_fields: ['name', 'size', 'region'],
      previous_values: { name: 'Patchy', size: 3, region: null },
    });
  });

  test('PATCH that changes nothing writes no event', async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Same', meta: { a: 1, b: [1, 2] } });
    const res = await t.request('PATCH', `/api/v1/leads/${lead._id}`, {
      token: org.token,
      body: { name: 'Same', meta: { b: [1, 2], a: 1 } },
    });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.update_lead)).lead.updated_at).toBe(lead.updated_at);
    expect((await eventsOf(t, lead._id)).map((e) => e.event)).toEqual(['lead.created']);
  });

  test('PUT replaces editable fields: omitted ones reset, properties replaced wholesale', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org, {
      name: 'Putty',
      description: 'old',
      url: 'https://putty.example',
      status: 'qualified',
      tags: ['a'],
      color: 'blue',
    });
    const res = await t.request('PUT', `/api/v1/leads/${lead._id}`, {
      token: org.token,
      body: { name: 'Putty 2', shape: 'round' },
    });
    expect(res.status).toBe(200);
    const replaced = (await readOutput(res, TOOL.replace_lead)).lead;
    expect(replaced).toMatchObject({
      _id: lead._id,
      name: 'Putty 2',
      description: null,
      url: null,
      status: 'new',
      owner_id: null,
      tags: [],
      shape: 'round',
      created_at: lead.created_at,
      created_by: org.ownerId,
    });
    expect(replaced).not.toHaveProperty('color');

    const missingName = await t.request('PUT', `/api/v1/leads/${lead._id}`, {
      token: org.token,
      body: { description: 'no name' },
    });
    expect(missingName.status).toBe(400);
    expect(detailFields(await readError(missingName, 400))).toEqual(['name']);

    const events = await eventsOf(t, lead._id);
    expect(events.map((e) => e.event)).toEqual(['lead.created', 'lead.updated', 'lead.status_changed']);
    expect(events[2]?.data).toMatchObject({ status: 'new', previous_status: 'qualified' });
  });

  test('PATCH with a reserved key or a foreign owner is a 400 and changes nothing', async ({
    t,
    org,
    other,
  }) => {
    const lead = await createLead(t, org, { name: 'Guarded' });
    const reserved = await t.request('PATCH', `/api/v1/leads/${lead._id}`, {
      token: org.token,
      body: { name: 'Changed', converted_at: '2020-01-01T00:00:00Z' },
    });
    expect(reserved.status).toBe(400);
    expect(detailFields(await readError(reserved, 400))).toEqual(['converted_at']);
    const owner = await t.request('PATCH', `/api/v1/leads/${lead._id}`, {
      token: org.token,
      body: { name: 'Changed', owner_id: other.ownerId },
    });
    expect(owner.status).toBe(400);
    expect(detailFields(await readError(owner, 400))).toEqual(['owner_id']);
    const res = await t.request('GET', `/api/v1/leads/${lead._id}`, { token: org.token });
    expect((await readOutput(res, TOOL.get_lead)).lead.name).toBe('Guarded');
    expect((await eventsOf(t, lead._id)).map((e) => e.event)).toEqual(['lead.created']);
  });
});

describe('delete', () => {
  test('moves the lead to the trash: 404 afterwards, gone from the list, lead.deleted written', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org, { name: 'Doomed Unique Zyxwv' });
    const res = await t.request('DELETE', `/api/v1/leads/${lead._id}`, { token: org.token });
    expect(res.status).toBe(200);
    expect(await readOk(res, messageOutput)).toEqual({ message: expect.any(String) });
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
      ['POST', undefined],
    ] as const) {
      const path =
        method === 'POST' ? `/api/v1/leads/${lead._id}/convert-to-client` : `/api/v1/leads/${lead._id}`;
      const again = await t.request(method, path, { token: org.token, body });
      expect(again.status, method).toBe(404);
    }
    expect((await list(t, org, '?search=zyxwv')).total).toBe(0);
    const events = await eventsOf(t, lead._id);
    expect(events.map((e) => e.event)).toEqual(['lead.created', 'lead.deleted']);
    expect(events[1]?.data).toMatchObject({ _id: lead._id, name: 'Doomed Unique Zyxwv' });
    expect(typeof events[1]?.data.deleted_at).toBe('string');
  });
});

describe('list', () => {
  let listOrg: TestOrg;
  let memberId: string;

  test.beforeAll(async ({ t }) => {
    listOrg = await t.createOrg({ name: 'List Org' });
    memberId = (await t.createUser(listOrg.orgId, 'member')).userId;
    const items = Array.from({ length: 30 }, (_, i) => ({
      name: `Company ${String(i).padStart(2, '0')}`,
      status: i % 3 === 0 ? 'qualified' : 'new',
      tags: i % 5 === 0 ? ['vip'] : [],
      ...(i % 4 === 0 ? { owner_id: memberId } : {}),
    }));
    const res = await t.request('POST', '/api/v1/leads/bulk', { token: listOrg.token, body: { items } });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.bulk_upsert_leads)).created).toBe(30);
  });

  test('pages with 25 by default, newest first', async ({ t, org }) => {
    const body = await list(t, org, '', listOrg);
    expect(body).toMatchObject({ total: 30, page: 1, limit: 25, totalPages: 2 });
    expect(body.leads).toHaveLength(25);
    expect(body.leads[0]?.name).toBe('Company 29');
    const second = await list(t, org, '?page=2', listOrg);
    expect(second.leads.map((l) => l.name)).toEqual([
      'Company 04',
      'Company 03',
      'Company 02',
      'Company 01',
      'Company 00',
    ]);
  });

  test('accepts limit 100, refuses 101 and 0 with details on limit', async ({ t, org }) => {
    expect((await list(t, org, '?limit=100', listOrg)).leads).toHaveLength(30);
    for (const limit of ['101', '0', 'abc']) {
      const res = await t.request('GET', `/api/v1/leads?limit=${limit}`, { token: listOrg.token });
      expect(res.status).toBe(400);
      expect(detailFields(await readError(res, 400))).toEqual(['limit']);
    }
  });

  test('answers a page beyond the end with an empty list and the real totals', async ({ t, org }) => {
    const body = await list(t, org, '?page=5&limit=10', listOrg);
    expect(body).toEqual({ leads: [], total: 30, page: 5, limit: 10, totalPages: 3 });
  });

  test('sorts ascending and descending on allowed fields and refuses others', async ({ t, org }) => {
    const asc = await list(t, org, '?sort=name&limit=3', listOrg);
    expect(asc.leads.map((l) => l.name)).toEqual(['Company 00', 'Company 01', 'Company 02']);
    const desc = await list(t, org, '?sort=-name&limit=2', listOrg);
    expect(desc.leads.map((l) => l.name)).toEqual(['Company 29', 'Company 28']);
    const oldest = await list(t, org, '?sort=created_at&limit=1', listOrg);
    expect(oldest.leads[0]?.name).toBe('Company 00');
    const byStatus = await list(t, org, '?sort=-status&limit=100', listOrg);
    expect(byStatus.leads[0]?.status).toBe('qualified');
    expect(byStatus.leads.at(-1)?.status).toBe('new');
    for (const sort of ['description', '-owner_id', 'custom']) {
      const res = await t.request('GET', `/api/v1/leads?sort=${sort}`, { token: listOrg.token });
      expect(res.status).toBe(400);
      expect(detailFields(await readError(res, 400))).toEqual(['sort']);
    }
  });

  test('filters by status, owner and tag', async ({ t, org }) => {
    expect((await list(t, org, '?status=qualified', listOrg)).total).toBe(10);
    const owned = await list(t, org, `?owner_id=${memberId}`, listOrg);
    expect(owned.total).toBe(8);
    expect(owned.leads.every((l) => l.owner_id === memberId)).toBe(true);
    const vip = await list(t, org, '?tag=vip&status=qualified', listOrg);
    expect(vip.leads.map((l) => l.name).sort()).toEqual(['Company 00', 'Company 15']);
    const bad = await t.request('GET', '/api/v1/leads?status=won', { token: listOrg.token });
    expect(bad.status).toBe(400);
  });

  test('refuses unknown query parameters', async ({ t }) => {
    const res = await t.request('GET', '/api/v1/leads?colour=red', { token: listOrg.token });
    expect(res.status).toBe(400);
  });
});

describe('full-text search', () => {
  let searchOrg: TestOrg;

  test.beforeAll(async ({ t, other }) => {
    searchOrg = await t.createOrg({ name: 'Search Org' });
    await createLead(t, searchOrg, { name: 'Globex Corporation', description: 'Nuclear energy supplier' });
    await createLead(t, searchOrg, { name: 'Initech', description: 'Software for globetrotters' });
    await createLead(t, searchOrg, { name: 'Hooli', description: 'Search engines and storage' });
    await createLead(t, other, { name: 'Globex Rival', description: 'Competes with globex' });
  });

  test('finds leads by a word prefix in the name or description', async ({ t, org }) => {
    const glob = await list(t, org, '?search=glob', searchOrg);
    expect(glob.leads.map((l) => l.name).sort()).toEqual(['Globex Corporation', 'Initech']);
    const nuc = await list(t, org, '?search=NUCL', searchOrg);
    expect(nuc.leads.map((l) => l.name)).toEqual(['Globex Corporation']);
    const both = await list(t, org, '?search=globex%20energy', searchOrg);
    expect(both.leads.map((l) => l.name)).toEqual(['Globex Corporation']);
    expect((await list(t, org, '?search=zzzz', searchOrg)).total).toBe(0);
  });

  test("never returns other organizations' leads", async ({ t, org, other }) => {
    const body = await list(t, org, '?search=rival', searchOrg);
    expect(body.total).toBe(0);
    expect((await list(t, org, '?search=rival', other)).total).toBe(1);
  });

  test('treats query syntax as plain words', async ({ t, org }) => {
    for (const q of ["glob'x", 'glob:*|hoo', '!&()', 'hooli)(']) {
      const res = await t.request('GET', `/api/v1/leads?search=${encodeURIComponent(q)}`, {
        token: searchOrg.token,
      });
      expect(res.status, q).toBe(200);
    }
    expect((await list(t, org, `?search=${encodeURIComponent('hooli)(')}`, searchOrg)).total).toBe(1);
    expect((await list(t, org, `?search=${encodeURIComponent('!&()')}`, searchOrg)).total).toBe(0);
  });

  test('combines search with an explicit sort', async ({ t, org }) => {
    const body = await list(t, org, '?search=glob&sort=name', searchOrg);
    expect(body.leads.map((l) => l.name)).toEqual(['Globex Corporation', 'Initech']);
  });
});

describe('convert to client', () => {
  test('sets status client and converted_at once, emitting updated and status_changed', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org, { name: 'Convertible', status: 'qualified' });
    const res = await t.request('POST', `/api/v1/leads/${lead._id}/convert-to-client`, { token: org.token });
    expect(res.status).toBe(200);
    const converted = (await readOutput(res, TOOL.convert_lead_to_client)).lead;
    expect(converted.status).toBe('client');
    expect(converted.converted_at).toEqual(expect.any(String));

    const again = await t.request('POST', `/api/v1/leads/${lead._id}/convert-to-client`, {
      token: org.token,
    });
    expect(again.status).toBe(200);
    expect((await readOutput(again, TOOL.convert_lead_to_client)).lead).toEqual(converted);

    const events = await eventsOf(t, lead._id);
    expect(events.map((e) => e.event)).toEqual(['lead.created', 'lead.updated', 'lead.status_changed']);
    expect(events[1]?.data).toMatchObject({
      changed_fields: ['status', 'converted_at'],
      previous_values: { status: 'qualified', converted_at: null },
    });
    expect(events[2]?.data).toMatchObject({ status: 'client', previous_status: 'qualified' });
  });
});

describe('bulk upsert', () => {
  test('creates and updates items independently, with per-item results', async ({ t, org, other }) => {
    const existing = await createLead(t, org, { name: 'Bulk Target', stage: 1 });
    const res = await t.request('POST', '/api/v1/leads/bulk', {
      token: org.token,
      body: {
        items: [
          { name: 'Bulk New 1', region: 'APAC' },
          { name: '' },
          { _id: existing._id, status: 'contacted', stage: 2 },
          { _id: '0123456789abcdef01234567', name: 'Ghost' },
          { name: 'Bulk New 2', owner_id: other.ownerId },
          { name: 'Bulk New 3', search: 'reserved' },
          { _id: 'not-an-id' },
          { name: 'Bulk New 4' },
        ],
      },
    });
    expect(res.status).toBe(200);
    const body = await readOutput(res, TOOL.bulk_upsert_leads);
    expect(body).toMatchObject({ created: 2, updated: 1, failed: 5 });
    expect(body.results.map((r) => [r.index, r.status])).toEqual([
      [0, 'created'],
      [1, 'error'],
      [2, 'updated'],
      [3, 'error'],
      [4, 'error'],
      [5, 'error'],
      [6, 'error'],
      [7, 'created'],
    ]);
    expect(body.results[0]?.lead).toMatchObject({ name: 'Bulk New 1', region: 'APAC' });
    expect(body.results[1]?.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'name' }] });
    expect(body.results[2]?.lead).toMatchObject({ _id: existing._id, status: 'contacted', stage: 2 });
    expect(body.results[3]?.error).toMatchObject({ code: 'not_found' });
    expect(body.results[4]?.error).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'owner_id' }],
    });
    expect(body.results[5]?.error).toMatchObject({ details: [{ field: 'search' }] });
    expect(body.results[6]?.error).toMatchObject({ details: [{ field: '_id' }] });

    // Failed items left no lead and no event behind; good ones did.
    const names = (await list(t, org, '?search=bulk&limit=100')).leads.map((l) => l.name).sort();
    expect(names).toEqual(['Bulk New 1', 'Bulk New 4', 'Bulk Target']);
    const ghost = await t.services.db.system
      .select({ id: outboxEvents.id })
      .from(outboxEvents)
      .where(sql`${outboxEvents.data}->>'name' in ('Bulk New 2', 'Bulk New 3', 'Ghost')`);
    expect(ghost).toHaveLength(0);
    expect((await eventsOf(t, existing._id)).map((e) => e.event)).toEqual([
      'lead.created',
      'lead.updated',
      'lead.status_changed',
    ]);
    const created = body.results[0]?.lead;
    expect(created && (await eventsOf(t, created._id)).map((e) => e.event)).toEqual(['lead.created']);
  });

  test('refuses an empty or oversized batch as a whole', async ({ t, org }) => {
    const empty = await t.request('POST', '/api/v1/leads/bulk', { token: org.token, body: { items: [] } });
    expect(empty.status).toBe(400);
    const big = Array.from({ length: 101 }, (_, i) => ({ name: `n${i}` }));
    const tooMany = await t.request('POST', '/api/v1/leads/bulk', { token: org.token, body: { items: big } });
    expect(tooMany.status).toBe(400);
    expect(detailFields(await readError(tooMany, 400))).toEqual(['items']);
  });
});

describe('bulk tags', () => {
  test('adds and removes tags per lead, reporting unchanged and not-found ids', async ({ t, org, other }) => {
    const a = await createLead(t, org, { name: 'Tag A', tags: ['old', 'keep'] });
    const b = await createLead(t, org, { name: 'Tag B', tags: ['hot'] });
    const trashed = await createLead(t, org, { name: 'Tag Trashed' });
    await t.request('DELETE', `/api/v1/leads/${trashed._id}`, { token: org.token });
    const foreign = await createLead(t, other, { name: 'Tag Foreign' });
    const unknown = '0123456789abcdef01234567';

    const res = await t.request('POST', '/api/v1/leads/bulk/tags', {
      token: org.token,
      body: { lead_ids: [a._id, b._id, unknown, trashed._id, foreign._id], add: ['hot'], remove: ['old'] },
    });
    expect(res.status).toBe(200);
    const body = await readOutput(res, TOOL.bulk_tag_leads);
    expect(body).toMatchObject({ updated: 1, unchanged: 1, failed: 3 });
    expect(body.results).toEqual([
      { index: 0, _id: a._id, status: 'updated', tags: ['keep', 'hot'] },
      { index: 1, _id: b._id, status: 'unchanged', tags: ['hot'] },
      expect.objectContaining({ index: 2, _id: unknown, status: 'not_found' }),
      expect.objectContaining({ index: 3, _id: trashed._id, status: 'not_found' }),
      expect.objectContaining({ index: 4, _id: foreign._id, status: 'not_found' }),
    ]);
    const events = await eventsOf(t, a._id);
    expect(events.map((e) => e.event)).toEqual(['lead.created', 'lead.updated']);
    expect(events[1]?.data).toMatchObject({
      changed_fields: ['tags'],
      previous_values: { tags: ['old', 'keep'] },
    });
    expect((await eventsOf(t, b._id)).map((e) => e.event)).toEqual(['lead.created']);
    const foreignAfter = await t.request('GET', `/api/v1/leads/${foreign._id}`, { token: other.token });
    expect((await readOutput(foreignAfter, TOOL.get_lead)).lead.tags).toEqual([]);
  });

  test('needs at least one tag to add or remove and rejects bad ids', async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Tag None' });
    const none = await t.request('POST', '/api/v1/leads/bulk/tags', {
      token: org.token,
      body: { lead_ids: [lead._id], add: [] },
    });
    expect(none.status).toBe(400);
    const badId = await t.request('POST', '/api/v1/leads/bulk/tags', {
      token: org.token,
      body: { lead_ids: ['xyz'], add: ['a'] },
    });
    expect(badId.status).toBe(400);
    expect(detailFields(await readError(badId, 400))).toEqual(['lead_ids.0']);
  });

  test('reports a lead that would exceed 50 tags as an error without touching it', async ({ t, org }) => {
    const full = await createLead(t, org, {
      name: 'Tag Full',
      tags: Array.from({ length: 50 }, (_, i) => `t${i}`),
    });
    const res = await t.request('POST', '/api/v1/leads/bulk/tags', {
      token: org.token,
      body: { lead_ids: [full._id], add: ['one-more'] },
    });
    const body = await readOutput(res, TOOL.bulk_tag_leads);
    expect(body.failed).toBe(1);
    expect(body.results[0]).toMatchObject({ status: 'error', error: { code: 'validation_failed' } });
  });
});

describe('ids and tenancy', () => {
  test('answers 400 for a path id that is not 24 hex characters', async ({ t, org }) => {
    for (const [method, path] of [
      ['GET', '/api/v1/leads/123'],
      ['PUT', '/api/v1/leads/not-an-object-id-at-all!'],
      ['PATCH', '/api/v1/leads/zzzzzzzzzzzzzzzzzzzzzzzz'],
      ['DELETE', '/api/v1/leads/123'],
      ['POST', '/api/v1/leads/123/convert-to-client'],
    ] as const) {
      const body = method === 'PUT' || method === 'PATCH' ? { name: 'x' } : undefined;
      const res = await t.request(method, path, { token: org.token, body });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(detailFields(await readError(res, 400))).toEqual(['id']);
    }
  });

  test("answers 404 for another organization's lead on every lead tool, leaving it untouched", async ({
    t,
    org,
    other,
  }) => {
    const foreign = await createLead(t, other, { name: 'Foreign Lead' });
    const path = `/api/v1/leads/${foreign._id}`;
    const calls: [string, string, unknown][] = [
      ['GET', path, undefined],
      ['PUT', path, { name: 'Hijacked' }],
      ['PATCH', path, { name: 'Hijacked' }],
      ['DELETE', path, undefined],
      ['POST', `${path}/convert-to-client`, undefined],
    ];
    for (const [method, p, body] of calls) {
      const res = await t.request(method, p, { token: org.token, body });
      expect(res.status, method).toBe(404);
      expect(await readError(res, 404)).toMatchObject({ error: 'Not found' });
    }
    const still = await t.request('GET', path, { token: other.token });
    expect((await readOutput(still, TOOL.get_lead)).lead).toMatchObject({
      name: 'Foreign Lead',
      status: 'new',
    });
    expect((await eventsOf(t, foreign._id)).map((e) => e.event)).toEqual(['lead.created']);
  });
});

describe('permissions and scopes', () => {
  test('lets a viewer read but not create', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    const res = await t.request('POST', '/api/v1/leads', { token: viewer.token, body: { name: 'Nope' } });
    expect(res.status).toBe(403);
    expect(await readError(res, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'leads.create',
    });
    expect((await t.request('GET', '/api/v1/leads', { token: viewer.token })).status).toBe(200);
  });

  test('lets a member create and edit but not delete', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const lead = await createLead(t, member, { name: 'Member Lead' });
    expect(lead.owner_id).toBe(member.userId);
    const patch = await t.request('PATCH', `/api/v1/leads/${lead._id}`, {
      token: member.token,
      body: { status: 'lost' },
    });
    expect(patch.status).toBe(200);
    const res = await t.request('DELETE', `/api/v1/leads/${lead._id}`, { token: member.token });
    expect(res.status).toBe(403);
    expect(await readError(res, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'leads.delete',
    });
    const manager = await t.createUser(org.orgId, 'manager');
    expect((await t.request('DELETE', `/api/v1/leads/${lead._id}`, { token: manager.token })).status).toBe(
      200,
    );
  });

  test('holds a PAT to its scopes: read:leads lists but cannot create', async ({ t, org }) => {
    const { token } = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    const res = await t.request('POST', '/api/v1/leads', { token, body: { name: 'Scoped' } });
    expect(res.status).toBe(403);
    const body = await readError(res, 403);
    expect(body.error).toContain('write:leads');
    expect((await t.request('GET', '/api/v1/leads', { token })).status).toBe(200);
    const bulk = await t.request('POST', '/api/v1/leads/bulk/tags', {
      token,
      body: { lead_ids: ['0123456789abcdef01234567'], add: ['x'] },
    });
    expect(bulk.status).toBe(403);
  });

  test("writes the lead's events to the caller organization's outbox", async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Tenant Check' });
    const outbox = await t.services.db.system
      .select({ orgId: outboxEvents.orgId })
      .from(outboxEvents)
      .where(and(sql`${outboxEvents.data}->>'_id' = ${lead._id}`, eq(outboxEvents.event, 'lead.created')));
    expect(outbox).toEqual([{ orgId: org.orgId }]);
  });
});

describe('list total from the live-lead counter', () => {
  test('stays equal to a real count through create, bulk, trash, restore and user deletion', async ({
    t,
    other,
  }) => {
    const fresh = await t.createOrg();
    const member = await t.createUser(fresh.orgId, 'member');
    const total = async () =>
      (await readOutput(await t.request('GET', '/api/v1/leads', { token: fresh.token }), TOOL.list_leads))
        .total;
    const counted = async () => {
      const [row] = await t.services.db.system
        .select({ n: count() })
        .from(leads)
        .where(and(eq(leads.orgId, fresh.orgId), isNull(leads.deletedAt)));
      return row?.n;
    };
    const expectConsistent = async (expected: number) => {
      expect(await total()).toBe(expected);
      expect(await counted()).toBe(expected);
    };

    await expectConsistent(0);
    const created: string[] = [];
    for (const name of ['One', 'Two', 'Three']) {
      created.push((await createLead(t, fresh, { name, owner_id: member.userId }))._id);
    }
    await expectConsistent(3);
    const bulk = await t.request('POST', '/api/v1/leads/bulk', {
      token: fresh.token,
      body: {
        items: [{ name: 'Four' }, { name: '' }, { name: 'Five' }, { _id: created[0], name: 'One again' }],
      },
    });
    expect(bulk.status).toBe(200);
    await expectConsistent(5);
    await t.request('DELETE', `/api/v1/leads/${created[1]}`, { token: fresh.token });
    await expectConsistent(4);
    await t.request('POST', `/api/v1/trash/${created[1]}/restore`, { token: fresh.token });
    await expectConsistent(5);
    // Deleting the member with acknowledgement trashes the three leads they own.
    const del = await t.request('DELETE', `/api/v1/users/${member.userId}`, {
      token: fresh.token,
      body: { acknowledge_data_deletion: true },
    });
    expect(del.status).toBe(200);
    await expectConsistent(2);
    // Another organization's leads never move this organization's total.
    await t.request('POST', '/api/v1/leads', { token: other.token, body: { name: 'Elsewhere' } });
    await expectConsistent(2);
    // A filtered list still counts the matching rows.
    const filtered = await readOutput(
      await t.request('GET', '/api/v1/leads?search=five', { token: fresh.token }),
      TOOL.list_leads,
    );
    expect(filtered.total).toBe(1);
  });
});
