// Locks in custom activity type definitions over REST: CRUD, unique names ignoring case, field definition errors, retyping and deletion refused while activities use the type, removed fields erased from activities, list conventions, roles and plan gating.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { activities } from '../../tools/activities/tables.ts';
import {
  createCustomActivityType,
  createLead,
  detailFields,
  fileTest,
  logActivity,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const BASE = '/api/v1/custom-activity-types';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' })
  .extend('starter', { scope: 'file' }, async ({ t }) =>
    t.createOrg({ plan: 'starter', name: 'Starter Org' }),
  )
  .extend('admin', { scope: 'file' }, async ({ t, org }) => t.createUser(org.orgId, 'admin'))
  .extend('member', { scope: 'file' }, async ({ t, org }) => t.createUser(org.orgId, 'member'))
  .extend('viewer', { scope: 'file' }, async ({ t, org }) => t.createUser(org.orgId, 'viewer'));

async function logCustom(
  t: TestContext,
  org: TestOrg,
  typeId: string,
  values: Record<string, unknown>,
): Promise<string> {
  const lead = await createLead(t, org, { name: 'Lead' });
  const activity = await logActivity(t, org, {
    type: 'custom',
    lead_id: lead._id,
    custom_activity_type_id: typeId,
    values,
  });
  return activity._id;
}

async function detailsOf(res: Response): Promise<string[]> {
  return detailFields(await readError(res, 400));
}

describe('CRUD', () => {
  test('creates, reads, updates and deletes a type', async ({ t, org }) => {
    const type = await createCustomActivityType(t, org, {
      name: 'Site visit',
      description: 'On-site meeting',
      fields: [
        { key: 'address', label: 'Address', type: 'text', required: true },
        { key: 'rating', label: 'Rating', type: 'choice', options: ['1', '2', '3'] },
      ],
    });
    expect(type).toMatchObject({
      name: 'Site visit',
      description: 'On-site meeting',
      created_by: org.ownerId,
      fields: [
        { key: 'address', label: 'Address', type: 'text', required: true },
        { key: 'rating', label: 'Rating', type: 'choice', required: false, options: ['1', '2', '3'] },
      ],
    });
    expect(type.fields[0]).not.toHaveProperty('options');

    const got = await t.request('GET', `${BASE}/${type._id}`, { token: org.token });
    expect(got.status).toBe(200);
    expect((await readOutput(got, TOOL.get_custom_activity_type)).custom_activity_type).toEqual(type);

    const patched = await t.request('PATCH', `${BASE}/${type._id}`, {
      token: org.token,
      body: { description: null, name: 'Site Visit 2' },
    });
    expect(patched.status).toBe(200);
    const after = (await readOutput(patched, TOOL.update_custom_activity_type)).custom_activity_type;
    expect(after).toMatchObject({ name: 'Site Visit 2', description: null, fields: type.fields });

    const put = await t.request('PUT', `${BASE}/${type._id}`, {
      token: org.token,
      body: { name: 'Site visit', fields: [{ key: 'address', label: 'Where', type: 'text' }] },
    });
    expect(put.status).toBe(200);
    expect((await readOutput(put, TOOL.replace_custom_activity_type)).custom_activity_type).toMatchObject({
      name: 'Site visit',
      description: null,
      fields: [{ key: 'address', label: 'Where', type: 'text', required: false }],
    });
    const noName = await t.request('PUT', `${BASE}/${type._id}`, { token: org.token, body: { fields: [] } });
    expect(await detailsOf(noName)).toEqual(['name']);

    const del = await t.request('DELETE', `${BASE}/${type._id}`, { token: org.token });
    expect(del.status).toBe(200);
    expect(await readOutput(del, TOOL.delete_custom_activity_type)).toEqual({
      message: 'Custom activity type deleted',
    });
    expect((await t.request('GET', `${BASE}/${type._id}`, { token: org.token })).status).toBe(404);
  });

  test('answers 404 for unknown ids and ids of other organizations, 400 for malformed ones', async ({
    t,
    org,
    other,
  }) => {
    const foreign = await createCustomActivityType(t, other, { name: 'Foreign' });
    expect((await t.request('GET', `${BASE}/${foreign._id}`, { token: org.token })).status).toBe(404);
    expect((await t.request('GET', `${BASE}/${newId()}`, { token: org.token })).status).toBe(404);
    expect(
      (await t.request('PATCH', `${BASE}/${foreign._id}`, { token: org.token, body: { name: 'x' } })).status,
    ).toBe(404);
    expect((await t.request('DELETE', `${BASE}/${foreign._id}`, { token: org.token })).status).toBe(404);
    expect(await detailsOf(await t.request('GET', `${BASE}/nope`, { token: org.token }))).toEqual(['id']);
  });

  test('refuses a duplicate name ignoring case with a 409, on create and rename', async ({
    t,
    org,
    other,
  }) => {
    await createCustomActivityType(t, org, { name: 'Demo call' });
    const dup = await t.request('POST', BASE, { token: org.token, body: { name: 'DEMO CALL' } });
    expect(dup.status).toBe(409);
    expect((await readError(dup, 409)).message).toContain('already exists');
    const second = await createCustomActivityType(t, org, { name: 'Training' });
    const rename = await t.request('PATCH', `${BASE}/${second._id}`, {
      token: org.token,
      body: { name: 'demo Call' },
    });
    expect(rename.status).toBe(409);
    // The same name in another organization is fine.
    await createCustomActivityType(t, other, { name: 'Demo call' });
  });

  test('validates names and field definitions with field paths', async ({ t, org }) => {
    const res = await t.request('POST', BASE, {
      token: org.token,
      body: {
        name: '',
        fields: [
          { key: 'ok', label: 'OK', type: 'text' },
          { key: 'Bad-Key', label: 'Bad', type: 'text' },
          { key: 'pick', label: 'Pick', type: 'choice' },
          { key: 'ok', label: 'Again', type: 'number' },
          { key: 'kind', label: 'Kind', type: 'colour' },
        ],
      },
    });
    expect((await detailsOf(res)).sort()).toEqual([
      'fields.1.key',
      'fields.2.options',
      'fields.4.type',
      'name',
    ]);
    const dup = await t.request('POST', BASE, {
      token: org.token,
      body: {
        name: 'Dup',
        fields: [
          { key: 'ok', label: 'OK', type: 'text' },
          { key: 'ok', label: 'Again', type: 'number' },
        ],
      },
    });
    expect(await detailsOf(dup)).toEqual(['fields.1.key']);
    const extra = await t.request('POST', BASE, { token: org.token, body: { name: 'X', colour: 'red' } });
    expect(extra.status).toBe(400);
  });
});

describe('fields in use', () => {
  test('refuses to retype a field while activities of the type exist, and erases removed fields from them', async ({
    t,
    org,
  }) => {
    const type = await createCustomActivityType(t, org, {
      name: 'Demo',
      fields: [
        { key: 'outcome', label: 'Outcome', type: 'text' },
        { key: 'seats', label: 'Seats', type: 'number' },
      ],
    });
    // No activities yet: retyping is fine.
    const early = await t.request('PATCH', `${BASE}/${type._id}`, {
      token: org.token,
      body: {
        fields: [
          { key: 'outcome', label: 'Outcome', type: 'choice', options: ['good', 'bad'] },
          { key: 'seats', label: 'Seats', type: 'number' },
        ],
      },
    });
    expect(early.status).toBe(200);
    const activityId = await logCustom(t, org, type._id, { outcome: 'good', seats: 3 });

    const retype = await t.request('PATCH', `${BASE}/${type._id}`, {
      token: org.token,
      body: {
        fields: [
          { key: 'outcome', label: 'Outcome', type: 'text' },
          { key: 'seats', label: 'Seats', type: 'number' },
        ],
      },
    });
    expect(retype.status).toBe(409);
    expect((await readError(retype, 409)).message).toContain('outcome');

    const removed = await t.request('PATCH', `${BASE}/${type._id}`, {
      token: org.token,
      body: {
        fields: [{ key: 'outcome', label: 'Result', type: 'choice', options: ['good', 'bad', 'ugly'] }],
      },
    });
    expect(removed.status).toBe(200);
    const [row] = await t.services.db.system
      .select({ fields: activities.fields })
      .from(activities)
      .where(eq(activities.id, activityId));
    expect(row?.fields).toEqual({ outcome: 'good' });
    const got = await t.request('GET', `/api/v1/activities/${activityId}`, { token: org.token });
    expect((await readOutput(got, TOOL.get_activity)).activity.values).toEqual({ outcome: 'good' });
  });

  test('refuses deletion while live activities use the type, and allows it once they are trashed', async ({
    t,
    org,
  }) => {
    const type = await createCustomActivityType(t, org, {
      name: 'Webinar',
      fields: [{ key: 'topic', label: 'Topic', type: 'text' }],
    });
    const activityId = await logCustom(t, org, type._id, { topic: 'Onboarding' });
    const refused = await t.request('DELETE', `${BASE}/${type._id}`, { token: org.token });
    expect(refused.status).toBe(409);
    expect((await readError(refused, 409)).message).toContain('1 activity uses');

    await t.request('DELETE', `/api/v1/activities/${activityId}`, { token: org.token });
    expect((await t.request('DELETE', `${BASE}/${type._id}`, { token: org.token })).status).toBe(200);
    const rows = await t.services.db.system.select().from(activities).where(eq(activities.id, activityId));
    expect(rows).toEqual([]);
  });
});

describe('list', () => {
  test('pages, sorts, searches and stays inside the organization', async ({ t }) => {
    const own = await t.createOrg({ plan: 'pro', name: 'Lister' });
    const foreign = await t.createOrg({ plan: 'pro', name: 'Foreign lister' });
    for (const name of ['beta', 'Alpha', 'gamma']) await createCustomActivityType(t, own, { name });
    await createCustomActivityType(t, foreign, { name: 'alpha foreign' });
    const list = async (query: string) => {
      const res = await t.request('GET', `${BASE}${query}`, { token: own.token });
      expect(res.status).toBe(200);
      return readOutput(res, TOOL.list_custom_activity_types);
    };

    const byName = await list('?sort=name');
    expect(byName.custom_activity_types.map((x) => x.name)).toEqual(['Alpha', 'beta', 'gamma']);
    expect(byName).toMatchObject({ total: 3, page: 1, limit: 25, totalPages: 1 });
    const desc = await list('?sort=-name&limit=2&page=2');
    expect(desc.custom_activity_types.map((x) => x.name)).toEqual(['Alpha']);
    expect(desc.totalPages).toBe(2);
    // Default: newest first, the id breaking ties within one millisecond.
    const newest = (await list('')).custom_activity_types;
    const expected = [...newest].sort((a, b) =>
      a.created_at === b.created_at ? b._id.localeCompare(a._id) : b.created_at.localeCompare(a.created_at),
    );
    expect(newest.map((x) => x._id)).toEqual(expected.map((x) => x._id));
    expect((await list('?search=alp')).custom_activity_types.map((x) => x.name)).toEqual(['Alpha']);
    expect((await list('?search=%25')).total).toBe(0);
    expect((await t.request('GET', `${BASE}?limit=101`, { token: own.token })).status).toBe(400);
    expect((await t.request('GET', `${BASE}?sort=fields`, { token: own.token })).status).toBe(400);
  });
});

describe('access', () => {
  test('lets every role read, and only holders of settings.custom_activity_types.manage write', async ({
    t,
    admin,
    member,
    viewer,
  }) => {
    const type = await createCustomActivityType(t, admin, { name: 'Access check' });
    for (const u of [member, viewer]) {
      expect((await t.request('GET', `${BASE}/${type._id}`, { token: u.token })).status).toBe(200);
      expect((await t.request('GET', BASE, { token: u.token })).status).toBe(200);
      const denied = await t.request('POST', BASE, { token: u.token, body: { name: `by ${u.userId}` } });
      expect(denied.status).toBe(403);
      expect(await readError(denied, 403)).toMatchObject({
        error: 'Forbidden',
        required_permission: 'settings.custom_activity_types.manage',
      });
      expect(
        (await t.request('PATCH', `${BASE}/${type._id}`, { token: u.token, body: { name: 'x' } })).status,
      ).toBe(403);
      expect((await t.request('DELETE', `${BASE}/${type._id}`, { token: u.token })).status).toBe(403);
    }
    expect((await t.request('DELETE', `${BASE}/${type._id}`, { token: admin.token })).status).toBe(200);
  });

  test('answers 402 on a plan without custom_activity_types, on every route', async ({ t, starter }) => {
    const id = newId();
    const calls: [string, string, unknown][] = [
      ['GET', BASE, undefined],
      ['POST', BASE, { name: 'Nope' }],
      ['GET', `${BASE}/${id}`, undefined],
      ['PATCH', `${BASE}/${id}`, { name: 'x' }],
      ['PUT', `${BASE}/${id}`, { name: 'x' }],
      ['DELETE', `${BASE}/${id}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await t.request(method, path, { token: starter.token, body });
      expect(res.status, `${method} ${path}`).toBe(402);
      expect(await readError(res, 402)).toMatchObject({
        error: 'plan_upgrade_required',
        feature: 'custom_activity_types',
        current_plan: 'starter',
      });
    }
  });

  test('needs read:custom_objects for a token (activity types belong to the custom-object family)', async ({
    t,
    org,
  }) => {
    const { token } = await t.createPat(org.orgId, org.ownerId, ['read:contacts']);
    const refused = await t.request('GET', BASE, { token });
    expect(refused.status).toBe(403);
    expect(await readError(refused, 403)).toMatchObject({ required_scope: 'read:custom_objects' });
    const allowed = await t.createPat(org.orgId, org.ownerId, ['read:custom_objects']);
    expect((await t.request('GET', BASE, { token: allowed.token })).status).toBe(200);
  });
});
