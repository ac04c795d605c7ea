// Locks in custom objects over REST: definition CRUD and field rules, records validated against their definition with `values.<key>` details, PUT merge semantics, path mismatch 404s, roles, plan gating, trash and user deletion, and no events.
import { and, eq, isNotNull } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import { customObjectRecords } from '../../tools/custom-objects/tables.ts';
import {
  type Caller,
  type CustomObject,
  type CustomObjectRecord,
  createCustomObjectRecord,
  createLead,
  detailFields,
  fileTest,
  readError,
  readOutput,
  readRestored,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const BASE = '/api/v1/custom-objects';

const VEHICLE_FIELDS = [
  { key: 'title', label: 'Title', type: 'text', required: true },
  { key: 'mileage', label: 'Mileage', type: 'number' },
  { key: 'stage', label: 'Stage', type: 'choice', options: ['new', 'used'] },
  { key: 'registered_on', label: 'Registered on', type: 'date' },
  { key: 'electric', label: 'Electric', type: 'boolean' },
  { key: 'handler', label: 'Handler', type: 'user' },
  { key: 'buyer', label: 'Buyer', type: 'lead' },
];

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro', otherPlan: 'enterprise' })
  .extend('starter', { scope: 'file' }, async ({ t }) =>
    t.createOrg({ plan: 'starter', name: 'Starter Org' }),
  )
  .extend('member', { scope: 'file' }, async ({ t, org }) => t.createUser(org.orgId, 'member'))
  .extend('viewer', { scope: 'file' }, async ({ t, org }) => t.createUser(org.orgId, 'viewer'))
  .extend('manager', { scope: 'file' }, async ({ t, org }) => t.createUser(org.orgId, 'manager'))
  .extend(
    'otherUserId',
    { scope: 'file' },
    async ({ t, other }) => (await t.createUser(other.orgId, 'member')).userId,
  );

let nameSeq = 0;
/** A Vehicle definition with VEHICLE_FIELDS unless the body says otherwise. */
async function createObject(
  t: TestContext,
  org: TestOrg,
  body: Record<string, unknown> = {},
  as: Caller = org,
): Promise<CustomObject> {
  const res = await t.request('POST', BASE, {
    token: as.token,
    body: { name: `Vehicle ${nameSeq++}`, fields: VEHICLE_FIELDS, ...body },
  });
  return (await readOutput(res, TOOL.create_custom_object, 201)).custom_object;
}

async function getRecord(
  t: TestContext,
  org: TestOrg,
  objectId: string,
  recordId: string,
): Promise<Response> {
  return t.request('GET', `${BASE}/${objectId}/records/${recordId}`, { token: org.token });
}

async function listRecords(t: TestContext, org: TestOrg, objectId: string, query = '') {
  const res = await t.request('GET', `${BASE}/${objectId}/records${query}`, { token: org.token });
  return readOutput(res, TOOL.list_custom_object_records);
}

describe('definitions', () => {
  test('creates, reads, lists, updates and deletes a definition', async ({ t, org, viewer }) => {
    const created = await createObject(t, org, { name: 'Contract', description: 'Signed paperwork' });
    expect(created).toMatchObject({
      name: 'Contract',
      description: 'Signed paperwork',
      created_by: org.ownerId,
    });
    expect(created._id).toMatch(/^[0-9a-f]{24}$/);
    // `required` defaults to false, options appear only on choice fields.
    expect(created.fields[1]).toEqual({ key: 'mileage', label: 'Mileage', type: 'number', required: false });
    expect(created.fields[2]).toEqual({
      key: 'stage',
      label: 'Stage',
      type: 'choice',
      required: false,
      options: ['new', 'used'],
    });

    const got = await t.request('GET', `${BASE}/${created._id}`, { token: viewer.token });
    expect(got.status).toBe(200);
    expect((await readOutput(got, TOOL.get_custom_object)).custom_object).toEqual(created);

    const listed = await t.request('GET', `${BASE}?search=contr&limit=5`, { token: org.token });
    expect(listed.status).toBe(200);
    const page = await readOutput(listed, TOOL.list_custom_objects);
    expect(page).toMatchObject({ total: 1, page: 1, limit: 5, totalPages: 1 });
    expect(page.custom_objects.map((o) => o._id)).toEqual([created._id]);

    const patched = await t.request('PATCH', `${BASE}/${created._id}`, {
      token: org.token,
      body: { name: 'Contracts', description: null },
    });
    expect(patched.status).toBe(200);
    const updated = (await readOutput(patched, TOOL.update_custom_object)).custom_object;
    expect(updated).toMatchObject({ name: 'Contracts', description: null, fields: created.fields });

    const deleted = await t.request('DELETE', `${BASE}/${created._id}`, { token: org.token });
    expect(deleted.status).toBe(200);
    expect(await readOutput(deleted, TOOL.delete_custom_object)).toEqual({
      message: 'Custom object deleted',
    });
    expect((await t.request('GET', `${BASE}/${created._id}`, { token: org.token })).status).toBe(404);
  });

  test('lists with paging, sort by name and limit bounds', async ({ t, org }) => {
    const sorter = await t.createOrg({ plan: 'pro' });
    for (const name of ['bravo', 'Alpha', 'charlie']) {
      await createObject(t, org, { name }, sorter);
    }
    const res = await t.request('GET', `${BASE}?sort=name&limit=2`, { token: sorter.token });
    const body = await readOutput(res, TOOL.list_custom_objects);
    expect(body.custom_objects.map((o) => o.name)).toEqual(['Alpha', 'bravo']);
    expect(body).toMatchObject({ total: 3, totalPages: 2 });
    const second = await t.request('GET', `${BASE}?sort=-name&page=2&limit=2`, { token: sorter.token });
    expect((await readOutput(second, TOOL.list_custom_objects)).custom_objects.map((o) => o.name)).toEqual([
      'Alpha',
    ]);
    expect((await t.request('GET', `${BASE}?limit=101`, { token: sorter.token })).status).toBe(400);
    expect((await t.request('GET', `${BASE}?sort=fields`, { token: sorter.token })).status).toBe(400);
  });

  test('refuses a duplicate name case-insensitively with 409, on create and on rename', async ({
    t,
    org,
    other,
  }) => {
    await createObject(t, org, { name: 'Shipment' });
    const dup = await t.request('POST', BASE, {
      token: org.token,
      body: { name: 'SHIPMENT', fields: [] },
    });
    expect(dup.status).toBe(409);
    expect(await readError(dup, 409)).toMatchObject({
      code: 'conflict',
      details: [{ field: 'name', code: 'duplicate' }],
    });

    const second = await createObject(t, org, { name: 'Parcel' });
    const rename = await t.request('PATCH', `${BASE}/${second._id}`, {
      token: org.token,
      body: { name: 'shipment' },
    });
    expect(rename.status).toBe(409);
    // Another organization may use the same name.
    await createObject(t, org, { name: 'Shipment' }, other);
  });

  test('validates field definitions with field paths', async ({ t, org }) => {
    const res = await t.request('POST', BASE, {
      token: org.token,
      body: {
        name: '',
        fields: [
          { key: 'Bad Key', label: 'Bad', type: 'text' },
          { key: 'stage', label: 'Stage', type: 'choice' },
          { key: 'stage', label: 'Again', type: 'number', options: ['x'] },
          { key: 'kind', label: 'Kind', type: 'colour' },
        ],
      },
    });
    expect(res.status).toBe(400);
    const body = await readError(res, 400);
    expect(body.error).toBe('Validation failed');
    expect(detailFields(body)).toEqual(
      expect.arrayContaining([
        'name',
        'fields.0.key',
        'fields.1.options',
        'fields.2.options',
        'fields.3.type',
      ]),
    );

    const dupKeys = await t.request('POST', BASE, {
      token: org.token,
      body: {
        name: 'Dup keys',
        fields: [
          { key: 'title', label: 'Title', type: 'text' },
          { key: 'title', label: 'Title again', type: 'text' },
        ],
      },
    });
    expect(dupKeys.status).toBe(400);
    expect(detailFields(await readError(dupKeys, 400))).toEqual(['fields.1.key']);

    const unknown = await t.request('POST', BASE, {
      token: org.token,
      body: { name: 'Extra', fields: [], colour: 'red' },
    });
    expect(unknown.status).toBe(400);
  });

  test('answers 404 for unknown ids and ids of another organization, 400 for malformed ids', async ({
    t,
    org,
    other,
  }) => {
    const mine = await createObject(t, org);
    expect((await t.request('GET', `${BASE}/${mine._id}`, { token: other.token })).status).toBe(404);
    expect(
      (await t.request('PATCH', `${BASE}/${mine._id}`, { token: other.token, body: { name: 'x' } })).status,
    ).toBe(404);
    expect((await t.request('DELETE', `${BASE}/${mine._id}`, { token: other.token })).status).toBe(404);
    expect((await t.request('GET', `${BASE}/${newId()}`, { token: org.token })).status).toBe(404);
    expect((await t.request('GET', `${BASE}/not-an-id`, { token: org.token })).status).toBe(400);
    const list = await t.request('GET', `${BASE}`, { token: other.token });
    const ids = (await readOutput(list, TOOL.list_custom_objects)).custom_objects.map((o) => o._id);
    expect(ids).not.toContain(mine._id);
  });
});

describe('definition changes against existing records', () => {
  test('refuses a type change while records hold values, allows it when none do', async ({ t, org }) => {
    const obj = await createObject(t, org);
    await createCustomObjectRecord(t, org, obj._id, { values: { title: 'Van', mileage: 1200 } });
    const fields = VEHICLE_FIELDS.map((f) => (f.key === 'mileage' ? { ...f, type: 'text' } : f));
    const refused = await t.request('PATCH', `${BASE}/${obj._id}`, { token: org.token, body: { fields } });
    expect(refused.status).toBe(409);
    expect(await readError(refused, 409)).toMatchObject({
      code: 'conflict',
      details: [{ field: 'fields.1.type', code: 'type_change_with_values' }],
    });

    // electric holds no value in any record (null), so its type may change.
    const ok = VEHICLE_FIELDS.map((f) => (f.key === 'electric' ? { ...f, type: 'text' } : f));
    const changed = await t.request('PATCH', `${BASE}/${obj._id}`, {
      token: org.token,
      body: { fields: ok },
    });
    expect(changed.status).toBe(200);
    expect((await readOutput(changed, TOOL.update_custom_object)).custom_object.fields[4]?.type).toBe('text');
  });

  test('refuses a new required field while live records lack it, accepts it optional', async ({ t, org }) => {
    const obj = await createObject(t, org);
    await createCustomObjectRecord(t, org, obj._id, { values: { title: 'Truck' } });
    const withRequired = [...VEHICLE_FIELDS, { key: 'vin', label: 'VIN', type: 'text', required: true }];
    const refused = await t.request('PATCH', `${BASE}/${obj._id}`, {
      token: org.token,
      body: { fields: withRequired },
    });
    expect(refused.status).toBe(409);
    const body = await readError(refused, 409);
    expect(body.details?.[0]).toMatchObject({
      field: 'fields.7.required',
      code: 'required_field_missing_values',
    });
    expect(body.message).toContain('1 live record');

    // Making an existing field required is the same rule: mileage is empty on the record.
    const mileageRequired = VEHICLE_FIELDS.map((f) => (f.key === 'mileage' ? { ...f, required: true } : f));
    const refused2 = await t.request('PATCH', `${BASE}/${obj._id}`, {
      token: org.token,
      body: { fields: mileageRequired },
    });
    expect(refused2.status).toBe(409);

    // A blank text is no value either.
    const blankObj = await createObject(t, org, { fields: [{ key: 'notes', label: 'Notes', type: 'text' }] });
    await createCustomObjectRecord(t, org, blankObj._id, { values: { notes: '  ' } });
    const blankRequired = await t.request('PATCH', `${BASE}/${blankObj._id}`, {
      token: org.token,
      body: { fields: [{ key: 'notes', label: 'Notes', type: 'text', required: true }] },
    });
    expect(blankRequired.status).toBe(409);

    const optional = [...VEHICLE_FIELDS, { key: 'vin', label: 'VIN', type: 'text' }];
    const ok = await t.request('PATCH', `${BASE}/${obj._id}`, {
      token: org.token,
      body: { fields: optional },
    });
    expect(ok.status).toBe(200);
  });

  test('refuses dropping a choice option records use; removing a field drops its values', async ({
    t,
    org,
  }) => {
    const obj = await createObject(t, org);
    const rec = await createCustomObjectRecord(t, org, obj._id, {
      values: { title: 'Bike', stage: 'used', mileage: 7 },
    });
    const fewer = VEHICLE_FIELDS.map((f) => (f.key === 'stage' ? { ...f, options: ['new'] } : f));
    const refused = await t.request('PATCH', `${BASE}/${obj._id}`, {
      token: org.token,
      body: { fields: fewer },
    });
    expect(refused.status).toBe(409);
    expect((await readError(refused, 409)).details?.[0]?.field).toBe('fields.2.options');

    const withoutMileage = VEHICLE_FIELDS.filter((f) => f.key !== 'mileage');
    const res = await t.request('PATCH', `${BASE}/${obj._id}`, {
      token: org.token,
      body: { fields: withoutMileage },
    });
    expect(res.status).toBe(200);
    const after = await readOutput(await getRecord(t, org, obj._id, rec._id), TOOL.get_custom_object_record);
    expect(after.record.values).not.toHaveProperty('mileage');
    expect(after.record.values).toMatchObject({ title: 'Bike', stage: 'used' });
  });

  test('refuses to delete a definition with live records (naming the count) and deletes trashed ones with it', async ({
    t,
    org,
  }) => {
    const obj = await createObject(t, org);
    const a = await createCustomObjectRecord(t, org, obj._id, { values: { title: 'One' } });
    const b = await createCustomObjectRecord(t, org, obj._id, { values: { title: 'Two' } });
    const refused = await t.request('DELETE', `${BASE}/${obj._id}`, { token: org.token });
    expect(refused.status).toBe(409);
    expect(await readError(refused, 409)).toMatchObject({ code: 'conflict', live_records: 2 });
    expect(
      (await readError(await t.request('DELETE', `${BASE}/${obj._id}`, { token: org.token }), 409)).message,
    ).toContain('2 live record');

    for (const r of [a, b]) {
      expect(
        (await t.request('DELETE', `${BASE}/${obj._id}/records/${r._id}`, { token: org.token })).status,
      ).toBe(200);
    }
    const deleted = await t.request('DELETE', `${BASE}/${obj._id}`, { token: org.token });
    expect(deleted.status).toBe(200);
    const rows = await t.services.db.system
      .select()
      .from(customObjectRecords)
      .where(eq(customObjectRecords.objectId, obj._id));
    expect(rows).toEqual([]);
  });
});

describe('records', () => {
  let obj: CustomObject;
  test.beforeAll(async ({ t, org }) => {
    obj = await createObject(t, org, { name: 'Records vehicle' });
  });

  test('creates, reads, updates and deletes a record; owner defaults to the caller', async ({
    t,
    org,
    member,
    viewer,
    manager,
  }) => {
    const leadId = (await createLead(t, org, { name: 'Referenced lead' }))._id;
    const rec = await createCustomObjectRecord(t, member, obj._id, {
      values: {
        title: 'Model T',
        mileage: 42.5,
        stage: 'used',
        registered_on: '1925-02-28',
        electric: false,
        handler: member.userId,
        buyer: leadId,
      },
    });
    expect(rec).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      object_id: obj._id,
      values: {
        title: 'Model T',
        mileage: 42.5,
        stage: 'used',
        registered_on: '1925-02-28',
        electric: false,
        handler: member.userId,
        buyer: leadId,
      },
      owner_id: member.userId,
      created_by: member.userId,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    const got = await getRecord(t, org, obj._id, rec._id);
    expect(got.status).toBe(200);
    expect((await readOutput(got, TOOL.get_custom_object_record)).record).toEqual(rec);

    const moved = await t.request('PUT', `${BASE}/${obj._id}/records/${rec._id}`, {
      token: member.token,
      body: { owner_id: viewer.userId },
    });
    expect(moved.status).toBe(200);
    expect((await readOutput(moved, TOOL.update_custom_object_record)).record).toMatchObject({
      owner_id: viewer.userId,
      values: rec.values,
    });

    const del = await t.request('DELETE', `${BASE}/${obj._id}/records/${rec._id}`, { token: manager.token });
    expect(del.status).toBe(200);
    expect(await readOutput(del, TOOL.delete_custom_object_record)).toEqual({
      message: 'Custom object record moved to the trash',
    });
    expect((await getRecord(t, org, obj._id, rec._id)).status).toBe(404);
  });

  test('stores optional fields left out as null', async ({ t, org }) => {
    const rec = await createCustomObjectRecord(t, org, obj._id, { values: { title: 'Sparse' } });
    expect(rec.values).toEqual({
      title: 'Sparse',
      mileage: null,
      stage: null,
      registered_on: null,
      electric: null,
      handler: null,
      buyer: null,
    });
  });

  test('validates values against the definition with values.<key> details', async ({
    t,
    org,
    other,
    otherUserId,
  }) => {
    const foreignLead = (await createLead(t, other, { name: 'Referenced lead' }))._id;
    const res = await t.request('POST', `${BASE}/${obj._id}/records`, {
      token: org.token,
      body: {
        values: {
          colour: 'red',
          mileage: 'far',
          stage: 'scrapped',
          registered_on: '2024-02-30',
          electric: 'yes',
          handler: otherUserId,
          buyer: foreignLead,
        },
      },
    });
    expect(res.status).toBe(400);
    const body = await readError(res, 400);
    expect(body.error).toBe('Validation failed');
    const byField = Object.fromEntries((body.details ?? []).map((d) => [d.field, d.code]));
    expect(byField).toEqual({
      'values.colour': 'unknown_field',
      'values.mileage': 'invalid_type',
      'values.stage': 'invalid_value',
      'values.registered_on': 'invalid_date',
      'values.electric': 'invalid_type',
      'values.handler': 'invalid_reference',
      'values.buyer': 'invalid_reference',
      'values.title': 'required',
    });

    const missing = await t.request('POST', `${BASE}/${obj._id}/records`, { token: org.token, body: {} });
    expect(missing.status).toBe(400);
    expect(detailFields(await readError(missing, 400))).toEqual(['values']);

    const badOwner = await t.request('POST', `${BASE}/${obj._id}/records`, {
      token: org.token,
      body: { values: { title: 'x' }, owner_id: otherUserId },
    });
    expect(badOwner.status).toBe(400);
    expect(detailFields(await readError(badOwner, 400))).toEqual(['owner_id']);

    const blank = await t.request('POST', `${BASE}/${obj._id}/records`, {
      token: org.token,
      body: { values: { title: '   ' } },
    });
    expect(blank.status).toBe(400);
    expect(detailFields(await readError(blank, 400))).toEqual(['values.title']);
  });

  test('PUT merges: only sent keys change, null clears an optional field, required ones cannot be cleared', async ({
    t,
    org,
  }) => {
    const rec = await createCustomObjectRecord(t, org, obj._id, {
      values: { title: 'Merge me', mileage: 10, stage: 'new' },
    });
    const url = `${BASE}/${obj._id}/records/${rec._id}`;

    const one = await t.request('PUT', url, { token: org.token, body: { values: { mileage: 11 } } });
    expect(one.status).toBe(200);
    const afterOne = (await readOutput(one, TOOL.update_custom_object_record)).record;
    expect(afterOne.values).toEqual({ ...rec.values, mileage: 11 });
    expect(afterOne.owner_id).toBe(rec.owner_id);

    const cleared = await t.request('PUT', url, { token: org.token, body: { values: { stage: null } } });
    expect(cleared.status).toBe(200);
    expect((await readOutput(cleared, TOOL.update_custom_object_record)).record.values).toEqual({
      ...rec.values,
      mileage: 11,
      stage: null,
    });

    const required = await t.request('PUT', url, { token: org.token, body: { values: { title: null } } });
    expect(required.status).toBe(400);
    expect(await readError(required, 400)).toMatchObject({
      details: [{ field: 'values.title', code: 'required' }],
    });

    const wrong = await t.request('PUT', url, {
      token: org.token,
      body: { values: { mileage: 'x', nope: 1 } },
    });
    expect(wrong.status).toBe(400);
    expect(detailFields(await readError(wrong, 400)).sort()).toEqual(['values.mileage', 'values.nope']);

    const patched = await t.request('PUT', url, {
      token: org.token,
      body: { values: { title: 'Merged' } },
    });
    expect(patched.status).toBe(200);
    const final = (await readOutput(patched, TOOL.update_custom_object_record)).record;
    expect(final.values).toEqual({ ...rec.values, title: 'Merged', mileage: 11, stage: null });

    // An empty change changes nothing, not even updated_at.
    const noop = await t.request('PUT', url, { token: org.token, body: {} });
    expect((await readOutput(noop, TOOL.update_custom_object_record)).record).toEqual(final);
  });

  test('answers 404 when the record belongs to another object or organization', async ({ t, org, other }) => {
    const otherObj = await createObject(t, org);
    const rec = await createCustomObjectRecord(t, org, obj._id, { values: { title: 'Mine' } });
    const wrongPath = `${BASE}/${otherObj._id}/records/${rec._id}`;
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await t.request(method, wrongPath, {
        token: org.token,
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: { values: { title: 'Hijack' } } }),
      });
      expect(res.status, method).toBe(404);
      expect(await readError(res, 404)).toMatchObject({
        error: 'Not found',
        message: 'Custom object record not found',
      });
    }
    const unknownObject = await t.request('GET', `${BASE}/${newId()}/records/${rec._id}`, {
      token: org.token,
    });
    expect(await readError(unknownObject, 404)).toMatchObject({ message: 'Custom object not found' });
    const foreign = await t.request('GET', `${BASE}/${obj._id}/records/${rec._id}`, { token: other.token });
    expect(foreign.status).toBe(404);
    const create = await t.request('POST', `${BASE}/${obj._id}/records`, {
      token: other.token,
      body: { values: { title: 'Intruder' } },
    });
    expect(create.status).toBe(404);
    expect(
      (await readOutput(await getRecord(t, org, obj._id, rec._id), TOOL.get_custom_object_record)).record
        .values.title,
    ).toBe('Mine');
    expect((await t.request('GET', `${BASE}/${obj._id}/records/xyz`, { token: org.token })).status).toBe(400);
  });

  test('lists with paging, sort, owner filter and search over text values', async ({ t, org, member }) => {
    const listObj = await createObject(t, org);
    const created: CustomObjectRecord[] = [];
    for (const [i, title] of ['Red 50% van', 'Blue car', 'Red_truck'].entries()) {
      created.push(
        await createCustomObjectRecord(t, org, listObj._id, {
          values: { title, stage: 'new' },
          ...(i === 1 ? { owner_id: member.userId } : {}),
        }),
      );
    }
    const all = await listRecords(t, org, listObj._id, '?limit=2');
    expect(all).toMatchObject({ total: 3, page: 1, limit: 2, totalPages: 2 });
    // Newest first by default.
    expect(all.records.map((r) => r._id)).toEqual([created[2]?._id, created[1]?._id]);
    const asc = await listRecords(t, org, listObj._id, '?sort=created_at&page=2&limit=2');
    expect(asc.records.map((r) => r._id)).toEqual([created[2]?._id]);

    const owned = await listRecords(t, org, listObj._id, `?owner_id=${member.userId}`);
    expect(owned.records.map((r) => r._id)).toEqual([created[1]?._id]);

    const red = await listRecords(t, org, listObj._id, '?search=RED&sort=created_at');
    expect(red.records.map((r) => r._id)).toEqual([created[0]?._id, created[2]?._id]);
    // Wildcards match literally; keys and choice values are not searched.
    expect((await listRecords(t, org, listObj._id, '?search=50%25')).records.map((r) => r._id)).toEqual([
      created[0]?._id,
    ]);
    expect((await listRecords(t, org, listObj._id, '?search=_truck')).total).toBe(1);
    expect((await listRecords(t, org, listObj._id, '?search=title')).total).toBe(0);
    expect((await listRecords(t, org, listObj._id, '?search=new')).total).toBe(0);

    for (const query of ['?limit=101', '?limit=0', '?page=0', '?sort=title', '?owner_id=nope']) {
      const res = await t.request('GET', `${BASE}/${listObj._id}/records${query}`, { token: org.token });
      expect(res.status, query).toBe(400);
    }
  });
});

describe('access', () => {
  test('lets viewers read but not write, members not define objects or delete records', async ({
    t,
    org,
    member,
    viewer,
    manager,
  }) => {
    const obj = await createObject(t, org);
    const rec = await createCustomObjectRecord(t, org, obj._id, { values: { title: 'Guarded' } });
    const recUrl = `${BASE}/${obj._id}/records/${rec._id}`;

    expect((await t.request('GET', `${BASE}/${obj._id}/records`, { token: viewer.token })).status).toBe(200);
    expect((await t.request('GET', recUrl, { token: viewer.token })).status).toBe(200);

    const cases: [string, string, string, unknown, string][] = [
      [
        viewer.token,
        'POST',
        `${BASE}/${obj._id}/records`,
        { values: { title: 'x' } },
        'custom_objects.create',
      ],
      [viewer.token, 'PUT', recUrl, { values: { title: 'x' } }, 'custom_objects.edit'],
      [viewer.token, 'DELETE', recUrl, undefined, 'custom_objects.delete'],
      [member.token, 'DELETE', recUrl, undefined, 'custom_objects.delete'],
      [member.token, 'POST', BASE, { name: 'Member object', fields: [] }, 'settings.custom_objects.manage'],
      [manager.token, 'PATCH', `${BASE}/${obj._id}`, { name: 'Renamed' }, 'settings.custom_objects.manage'],
      [viewer.token, 'DELETE', `${BASE}/${obj._id}`, undefined, 'settings.custom_objects.manage'],
    ];
    for (const [token, method, url, body, permission] of cases) {
      const res = await t.request(method, url, { token, body });
      expect(res.status, `${method} ${url}`).toBe(403);
      expect(await readError(res, 403)).toMatchObject({
        error: 'Forbidden',
        required_permission: permission,
      });
    }
    const memberEdit = await t.request('PUT', recUrl, {
      token: member.token,
      body: { values: { title: 'ok' } },
    });
    expect(memberEdit.status).toBe(200);
    const admin = await t.createUser(org.orgId, 'admin');
    await createObject(t, org, {}, admin);
    expect((await t.request('GET', BASE)).status).toBe(401);
  });

  test('answers 402 with the plan body on starter and free plans', async ({ t, starter }) => {
    const expected = { error: 'plan_upgrade_required', feature: 'custom_objects', current_plan: 'starter' };
    const id = newId();
    const requests: [string, string, unknown][] = [
      ['GET', BASE, undefined],
      ['POST', BASE, { name: 'Nope', fields: [] }],
      ['GET', `${BASE}/${id}`, undefined],
      ['GET', `${BASE}/${id}/records`, undefined],
      ['POST', `${BASE}/${id}/records`, { values: {} }],
      ['PUT', `${BASE}/${id}/records/${id}`, { values: {} }],
      ['DELETE', `${BASE}/${id}/records/${id}`, undefined],
    ];
    for (const [method, url, body] of requests) {
      const res = await t.request(method, url, { token: starter.token, body });
      expect(res.status, `${method} ${url}`).toBe(402);
      expect(await readError(res, 402)).toMatchObject(expected);
    }
    const free = await t.createOrg({ plan: 'free' });
    const res = await t.request('GET', BASE, { token: free.token });
    expect(res.status).toBe(402);
    expect(await readError(res, 402)).toMatchObject({ ...expected, current_plan: 'free' });
  });

  test('writes no events', async ({ t, org }) => {
    const quiet = await t.createOrg({ plan: 'pro' });
    const obj = await createObject(t, org, {}, quiet);
    const rec = await createCustomObjectRecord(t, quiet, obj._id, { values: { title: 'Silent' } });
    await t.request('PUT', `${BASE}/${obj._id}/records/${rec._id}`, {
      token: quiet.token,
      body: { values: { mileage: 1 } },
    });
    await t.request('DELETE', `${BASE}/${obj._id}/records/${rec._id}`, { token: quiet.token });
    const rows = await t.services.db.system
      .select()
      .from(outboxEvents)
      .where(eq(outboxEvents.orgId, quiet.orgId));
    expect(rows).toEqual([]);
  });
});

describe('trash and owner deletion', () => {
  test('lists a deleted record in the trash and restores it', async ({ t, org }) => {
    const obj = await createObject(t, org);
    const rec = await createCustomObjectRecord(t, org, obj._id, { values: { title: 'Come back' } });
    await t.request('DELETE', `${BASE}/${obj._id}/records/${rec._id}`, { token: org.token });
    expect((await listRecords(t, org, obj._id)).total).toBe(0);

    const trash = await t.request('GET', '/api/v1/trash?type=custom_object_record', { token: org.token });
    expect(trash.status).toBe(200);
    const items = (await readOutput(trash, TOOL.list_trash)).items;
    expect(items).toContainEqual(
      expect.objectContaining({
        type: 'custom_object_record',
        _id: rec._id,
        name: `${obj.name}: Come back`,
        deleted_by: org.ownerId,
      }),
    );

    const restored = await t.request('POST', `/api/v1/trash/${rec._id}/restore`, { token: org.token });
    expect(restored.status).toBe(200);
    const body = await readRestored.custom_object_record(restored);
    expect(body.type).toBe('custom_object_record');
    expect(body.record).toMatchObject({ _id: rec._id, values: rec.values, owner_id: org.ownerId });
    expect((await getRecord(t, org, obj._id, rec._id)).status).toBe(200);
    // Restoring twice: it is no longer in the trash.
    expect((await t.request('POST', `/api/v1/trash/${rec._id}/restore`, { token: org.token })).status).toBe(
      404,
    );
  });

  test("trashes a deleted user's records with acknowledge_data_deletion, and the restorer becomes owner", async ({
    t,
    org,
    manager,
  }) => {
    const obj = await createObject(t, org);
    const leaving = await t.createUser(org.orgId, 'member');
    const rec = await createCustomObjectRecord(t, leaving, obj._id, { values: { title: 'Orphan' } });
    const userUrl = `/api/v1/users/${leaving.userId}`;

    const refused = await t.request('DELETE', userUrl, { token: org.token, body: {} });
    expect(refused.status).toBe(400);
    expect(await readError(refused, 400)).toMatchObject({
      code: 'user_owns_records',
      owned_records: { custom_object_records: 1 },
    });

    const res = await t.request('DELETE', userUrl, {
      token: org.token,
      body: { acknowledge_data_deletion: true },
    });
    expect(res.status).toBe(200);
    expect((await getRecord(t, org, obj._id, rec._id)).status).toBe(404);
    const [row] = await t.services.db.system
      .select()
      .from(customObjectRecords)
      .where(and(eq(customObjectRecords.id, rec._id), isNotNull(customObjectRecords.deletedAt)));
    expect(row?.deletedBy).toBe(org.ownerId);

    const restored = await t.request('POST', `/api/v1/trash/${rec._id}/restore`, { token: manager.token });
    expect(restored.status).toBe(200);
    expect((await readRestored.custom_object_record(restored)).record.owner_id).toBe(manager.userId);
  });
});
