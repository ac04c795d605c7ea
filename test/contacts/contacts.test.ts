// Locks in contacts over REST: CRUD with typed emails/phones and additional properties, merge updates (PATCH and PUT), list paging/sort/search/filter, validation, roles, token scopes, trash with the lead cascade, and outbox events.
import { describe, expect } from 'vitest';
import {
  type Caller,
  createContact,
  createLead,
  detailFields,
  fileTest,
  type InputOf,
  outboxCount,
  eventsOf as outboxEventsOf,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

/** A new lead's id. */
async function newLead(t: TestContext, org: TestOrg, name = 'Acme', as: Caller = org): Promise<string> {
  return (await createLead(t, as, { name }))._id;
}

async function list(t: TestContext, org: TestOrg, query: string, as: Caller = org) {
  const res = await t.request('GET', `/api/v1/contacts${query}`, { token: as.token });
  return readOutput(res, TOOL.list_contacts);
}

/** Outbox rows of one record of the organization, oldest first. */
const eventsOf = (t: TestContext, org: TestOrg, id: string) => outboxEventsOf(t, id, org.orgId);

describe('create and get', () => {
  test('creates a contact with typed emails and phones, normalizes phones and keeps additional properties', async ({
    t,
    org,
  }) => {
    const leadId = await newLead(t, org);
    const contact = await createContact(t, org, {
      lead_id: leadId,
      name: 'Jane Doe',
      title: 'CTO',
      emails: [{ email: 'jane@acme.example' }, { email: 'jane@home.example', type: 'home' }],
      phones: [{ phone: '+1 415-555-0100' }, { phone: '+44 20 7946 0958', type: 'mobile' }],
      linkedin: 'https://linkedin.example/jane',
      birthday: { month: 4, day: 1 },
    });
    expect(contact).toMatchObject({
      lead_id: leadId,
      name: 'Jane Doe',
      title: 'CTO',
      emails: [
        { email: 'jane@acme.example', type: 'work' },
        { email: 'jane@home.example', type: 'home' },
      ],
      phones: [
        { phone: '+14155550100', type: 'office' },
        { phone: '+442079460958', type: 'mobile' },
      ],
      linkedin: 'https://linkedin.example/jane',
      birthday: { month: 4, day: 1 },
      created_by: org.ownerId,
    });
    expect(contact._id).toMatch(/^[0-9a-f]{24}$/);
    expect(contact).not.toHaveProperty('custom');
    expect(contact).not.toHaveProperty('org_id');

    const res = await t.request('GET', `/api/v1/contacts/${contact._id}`, { token: org.token });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.get_contact)).contact).toEqual(contact);

    const events = await eventsOf(t, org, contact._id);
    expect(events.map((e) => e.event)).toEqual(['contact.created']);
    expect(events[0]?.data).toMatchObject({ _id: contact._id, name: 'Jane Doe', linkedin: contact.linkedin });
  });

  test('defaults title, emails and phones', async ({ t, org }) => {
    const contact = await createContact(t, org, { lead_id: await newLead(t, org), name: 'Bare' });
    expect(contact).toMatchObject({ title: null, emails: [], phones: [] });
  });

  test('answers 404 "Lead not found" for an unknown, foreign or trashed lead, creating nothing', async ({
    t,
    org,
    other,
  }) => {
    const foreignLead = await newLead(t, org, 'Foreign', other);
    const trashedLead = await newLead(t, org, 'Trashed');
    expect((await t.request('DELETE', `/api/v1/leads/${trashedLead}`, { token: org.token })).status).toBe(
      200,
    );
    const before = await outboxCount(t, org.orgId);
    for (const leadId of [foreignLead, trashedLead, '0123456789abcdef01234567']) {
      const res = await t.request('POST', '/api/v1/contacts', {
        token: org.token,
        body: { lead_id: leadId, name: 'Nobody' },
      });
      expect(res.status).toBe(404);
      expect((await readError(res, 404)).message).toBe('Lead not found');
    }
    expect(await outboxCount(t, org.orgId)).toBe(before);
    expect((await list(t, org, `?lead_id=${foreignLead}`)).total).toBe(0);
  });

  test('keeps any email or phone type label of 1-50 characters, trimmed, as integrations send them', async ({
    t,
    org,
  }) => {
    const leadId = await newLead(t, org);
    const contact = await createContact(t, org, {
      lead_id: leadId,
      name: 'Labels',
      emails: [
        { email: 'l1@x.example', type: 'personal' },
        { email: 'l2@x.example', type: ' Billing ' },
      ],
      phones: [
        { phone: '+14155550111', type: 'direct' },
        { phone: '+14155550112', type: 'fax' },
        { phone: '+14155550113', type: 'y'.repeat(50) },
      ],
    });
    expect(contact.emails.map((e) => e.type)).toEqual(['personal', 'Billing']);
    expect(contact.phones.map((p) => p.type)).toEqual(['direct', 'fax', 'y'.repeat(50)]);
    const res = await t.request('GET', `/api/v1/contacts/${contact._id}`, { token: org.token });
    expect((await readOutput(res, TOOL.get_contact)).contact.phones[0]).toEqual({
      phone: '+14155550111',
      type: 'direct',
    });
  });

  test('rejects invalid fields with details and writes no event', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const before = await outboxCount(t, org.orgId);
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'No lead' }, 'lead_id'],
      [{ lead_id: 'nope', name: 'Bad lead' }, 'lead_id'],
      [{ lead_id: leadId }, 'name'],
      [{ lead_id: leadId, name: '  ' }, 'name'],
      [{ lead_id: leadId, name: 'x'.repeat(501) }, 'name'],
      [{ lead_id: leadId, name: 'Nul\u0000' }, 'name'],
      [{ lead_id: leadId, name: 'A', title: 'x'.repeat(201) }, 'title'],
      [{ lead_id: leadId, name: 'A', emails: [{ email: 'not-an-email' }] }, 'emails.0.email'],
      [{ lead_id: leadId, name: 'A', emails: [{ email: 'a@b.example', type: ' ' }] }, 'emails.0.type'],
      [
        { lead_id: leadId, name: 'A', emails: [{ email: 'a@b.example', type: 'x'.repeat(51) }] },
        'emails.0.type',
      ],
      [{ lead_id: leadId, name: 'A', emails: ['a@b.example'] }, 'emails.0'],
      [{ lead_id: leadId, name: 'A', phones: [{ phone: '415 555 0100' }] }, 'phones.0.phone'],
      [{ lead_id: leadId, name: 'A', phones: [{ phone: '+12345' }] }, 'phones.0.phone'],
      [{ lead_id: leadId, name: 'A', phones: [{ phone: '+1234567890123456' }] }, 'phones.0.phone'],
      [{ lead_id: leadId, name: 'A', phones: [{ phone: '+1 555 CALL NOW' }] }, 'phones.0.phone'],
      [{ lead_id: leadId, name: 'A', phones: [{ phone: '+14155550100', type: '' }] }, 'phones.0.type'],
      [
        { lead_id: leadId, name: 'A', phones: [{ phone: '+14155550100', type: 'x'.repeat(51) }] },
        'phones.0.type',
      ],
      [{ lead_id: leadId, name: 'A', created_at: '2020-01-01T00:00:00Z' }, 'created_at'],
      [{ lead_id: leadId, name: 'A', custom: {} }, 'custom'],
      [{ lead_id: leadId, name: 'A', 'bad-key': 1 }, 'bad-key'],
      [{ lead_id: leadId, name: 'A', note: 'nul\u0000' }, 'note'],
    ];
    for (const [body, field] of cases) {
      const res = await t.request('POST', '/api/v1/contacts', { token: org.token, body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const err = await readError(res, 400);
      expect(err.error).toBe('Validation failed');
      expect(detailFields(err)).toContain(field);
    }
    const many = Array.from({ length: 21 }, (_, i) => ({ email: `p${i}@x.example` }));
    const tooMany = await t.request('POST', '/api/v1/contacts', {
      token: org.token,
      body: { lead_id: leadId, name: 'A', emails: many },
    });
    expect(tooMany.status).toBe(400);
    expect(await outboxCount(t, org.orgId)).toBe(before);
  });

  test('drops duplicate emails and phones', async ({ t, org }) => {
    const contact = await createContact(t, org, {
      lead_id: await newLead(t, org),
      name: 'Dup',
      emails: [{ email: 'dup@x.example' }, { email: 'DUP@x.example', type: 'home' }],
      phones: [{ phone: '+1 415 555 0101' }, { phone: '+1-415-555-0101', type: 'mobile' }],
    });
    expect(contact.emails).toEqual([{ email: 'dup@x.example', type: 'work' }]);
    expect(contact.phones).toEqual([{ phone: '+14155550101', type: 'office' }]);
  });
});

describe('update (PATCH and PUT)', () => {
  test('changes only sent fields, merges properties, removes those sent as null and emits the diff', async ({
    t,
    org,
  }) => {
    const contact = await createContact(t, org, {
      lead_id: await newLead(t, org),
      name: 'Patchy',
      title: 'VP',
      emails: [{ email: 'p@x.example' }],
      keep: 'me',
      drop: 'me',
    });
    const res = await t.request('PATCH', `/api/v1/contacts/${contact._id}`, {
      token: org.token,
      body: { title: null, phones: [{ phone: '+33 1 23 45 67 89' }], drop: null, added: 7 },
    });
    expect(res.status).toBe(200);
    const updated = (await readOutput(res, TOOL.update_contact)).contact;
    expect(updated).toMatchObject({
      name: 'Patchy',
      title: null,
      emails: [{ email: 'p@x.example', type: 'work' }],
      phones: [{ phone: '+33123456789', type: 'office' }],
      keep: 'me',
      added: 7,
    });
    expect(updated).not.toHaveProperty('drop');
    const events = await eventsOf(t, org, contact._id);
    expect(events.map((e) => e.event)).toEqual(['contact.created', 'contact.updated']);
    const data = events[1]?.data;
    expect(data?.changed_fields).toEqual(['title', 'phones', 'drop', 'added']);
    expect(data?.previous_values).toEqual({ title: 'VP', phones: [], drop: 'me', added: null });
  });

  test('PUT merges like PATCH and a no-op change emits nothing', async ({ t, org }) => {
    const contact = await createContact(t, org, {
      lead_id: await newLead(t, org),
      name: 'Put',
      title: 'CEO',
      extra: 1,
    });
    const res = await t.request('PUT', `/api/v1/contacts/${contact._id}`, {
      token: org.token,
      body: { name: 'Put Renamed' },
    });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.update_contact)).contact).toMatchObject({
      name: 'Put Renamed',
      title: 'CEO',
      extra: 1,
    });
    const same = await t.request('PATCH', `/api/v1/contacts/${contact._id}`, {
      token: org.token,
      body: { name: 'Put Renamed', extra: 1 },
    });
    expect(same.status).toBe(200);
    expect((await eventsOf(t, org, contact._id)).map((e) => e.event)).toEqual([
      'contact.created',
      'contact.updated',
    ]);
  });

  test('moves a contact to another live lead of the organization, and refuses other leads with 400', async ({
    t,
    org,
    other,
  }) => {
    const from = await newLead(t, org, 'From');
    const to = await newLead(t, org, 'To');
    const contact = await createContact(t, org, { lead_id: from, name: 'Mover' });
    const foreign = await newLead(t, org, 'Foreign', other);
    for (const leadId of [foreign, '0123456789abcdef01234567']) {
      const bad = await t.request('PATCH', `/api/v1/contacts/${contact._id}`, {
        token: org.token,
        body: { lead_id: leadId },
      });
      expect(bad.status).toBe(400);
      expect(detailFields(await readError(bad, 400))).toEqual(['lead_id']);
    }
    const res = await t.request('PATCH', `/api/v1/contacts/${contact._id}`, {
      token: org.token,
      body: { lead_id: to },
    });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.update_contact)).contact.lead_id).toBe(to);
    expect((await list(t, org, `?lead_id=${to}`)).contacts.map((c) => c._id)).toEqual([contact._id]);
    const last = (await eventsOf(t, org, contact._id)).at(-1);
    expect(last?.data).toMatchObject({ changed_fields: ['lead_id'], previous_values: { lead_id: from } });
  });

  test("refuses to move a contact its lead's opportunities still name (409)", async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const contact = await createContact(t, org, { lead_id: leadId, name: 'Linked' });
    const opp = await t.request('POST', '/api/v1/opportunities', {
      token: org.token,
      body: { lead_id: leadId, contact_id: contact._id, value: 10 },
    });
    expect(opp.status).toBe(201);
    const res = await t.request('PATCH', `/api/v1/contacts/${contact._id}`, {
      token: org.token,
      body: { lead_id: await newLead(t, org, 'Elsewhere') },
    });
    expect(res.status).toBe(409);
  });

  test('validates update input and answers 404 for unknown or foreign ids', async ({ t, org, other }) => {
    const contact = await createContact(t, org, { lead_id: await newLead(t, org), name: 'Valid' });
    const bad = await t.request('PATCH', `/api/v1/contacts/${contact._id}`, {
      token: org.token,
      body: { name: '', emails: [{ email: 'x' }], updated_at: 'now' },
    });
    expect(bad.status).toBe(400);
    expect(detailFields(await readError(bad, 400)).sort()).toEqual(['emails.0.email', 'name', 'updated_at']);
    const foreign = await createContact(t, other, {
      lead_id: await newLead(t, org, 'F', other),
      name: 'Theirs',
    });
    for (const method of ['GET', 'PATCH', 'PUT', 'DELETE']) {
      const res = await t.request(method, `/api/v1/contacts/${foreign._id}`, {
        token: org.token,
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: { name: 'Hijack' } }),
      });
      expect(res.status, method).toBe(404);
    }
    expect((await t.request('GET', '/api/v1/contacts/not-an-id', { token: org.token })).status).toBe(400);
  });
});

describe('list', () => {
  let listOrg: TestOrg;
  let leadA: string;
  let leadB: string;

  test.beforeAll(async ({ t, org }) => {
    listOrg = await t.createOrg({ name: 'List Org' });
    leadA = await newLead(t, org, 'Lead A', listOrg);
    leadB = await newLead(t, org, 'Lead B', listOrg);
    const people: InputOf<'create_contact'>[] = [
      {
        lead_id: leadA,
        name: 'charlie Brown',
        title: 'Engineer',
        emails: [{ email: 'charlie@peanuts.example' }],
      },
      { lead_id: leadA, name: 'Alice Smith', title: 'Head of Sales', phones: [{ phone: '+1 202 555 0188' }] },
      { lead_id: leadB, name: 'Bob Jones', title: 'Buyer' },
    ];
    for (const body of people) await createContact(t, listOrg, body);
  });

  test('pages newest first with total and totalPages', async ({ t, org }) => {
    const first = await list(t, org, '?limit=2', listOrg);
    expect(first).toMatchObject({ total: 3, page: 1, limit: 2, totalPages: 2 });
    expect(first.contacts.map((c) => c.name)).toEqual(['Bob Jones', 'Alice Smith']);
    const second = await list(t, org, '?limit=2&page=2', listOrg);
    expect(second.contacts.map((c) => c.name)).toEqual(['charlie Brown']);
  });

  test('sorts by the allowed fields and rejects others and limits above 100', async ({ t, org }) => {
    expect((await list(t, org, '?sort=name', listOrg)).contacts.map((c) => c.name)).toEqual([
      'Alice Smith',
      'Bob Jones',
      'charlie Brown',
    ]);
    expect((await list(t, org, '?sort=-name', listOrg)).contacts[0]?.name).toBe('charlie Brown');
    expect((await list(t, org, '?sort=created_at', listOrg)).contacts[0]?.name).toBe('charlie Brown');
    expect((await list(t, org, '?sort=-updated_at', listOrg)).total).toBe(3);
    for (const query of ['?sort=title', '?limit=101', '?limit=0', '?page=0', '?lead_id=nope']) {
      const res = await t.request('GET', `/api/v1/contacts${query}`, { token: listOrg.token });
      expect(res.status, query).toBe(400);
    }
  });

  test('filters by lead and searches name, title, email and phone', async ({ t, org }) => {
    expect((await list(t, org, `?lead_id=${leadA}`, listOrg)).total).toBe(2);
    expect((await list(t, org, `?lead_id=${leadB}`, listOrg)).contacts.map((c) => c.name)).toEqual([
      'Bob Jones',
    ]);
    const names = async (q: string) =>
      (await list(t, org, `?search=${encodeURIComponent(q)}`, listOrg)).contacts.map((c) => c.name);
    expect(await names('ali')).toEqual(['Alice Smith']);
    expect(await names('sales')).toEqual(['Alice Smith']);
    expect(await names('charlie@peanuts')).toEqual(['charlie Brown']);
    expect(await names('charlie@peanuts.example')).toEqual(['charlie Brown']);
    expect(await names('charlie brown')).toEqual(['charlie Brown']);
    expect(await names('+12025550188')).toEqual(['Alice Smith']);
    expect(await names('+1 202-555')).toEqual(['Alice Smith']);
    expect(await names('1202555')).toEqual(['Alice Smith']);
    expect(await names("it's a ' & | ! :* trap")).toEqual([]);
    expect(await names('nobody')).toEqual([]);
    expect(await names('!!!')).toEqual([]);
    expect((await list(t, org, '?search=bob', org)).total).toBe(0);
  });
});

describe('delete and trash', () => {
  test('moves a contact to the trash, emits contact.deleted, and restores it with contact.updated', async ({
    t,
    org,
  }) => {
    const contact = await createContact(t, org, { lead_id: await newLead(t, org), name: 'Trashy' });
    const del = await t.request('DELETE', `/api/v1/contacts/${contact._id}`, { token: org.token });
    expect(del.status).toBe(200);
    expect(await readOutput(del, TOOL.delete_contact)).toEqual({ message: 'Contact moved to the trash' });
    expect((await t.request('GET', `/api/v1/contacts/${contact._id}`, { token: org.token })).status).toBe(
      404,
    );
    expect((await t.request('DELETE', `/api/v1/contacts/${contact._id}`, { token: org.token })).status).toBe(
      404,
    );

    const trash = await readOutput(
      await t.request('GET', '/api/v1/trash?type=contact', { token: org.token }),
      TOOL.list_trash,
    );
    expect(trash.items).toContainEqual(
      expect.objectContaining({ type: 'contact', _id: contact._id, name: 'Trashy' }),
    );

    const res = await t.request('POST', `/api/v1/trash/${contact._id}/restore`, { token: org.token });
    expect(res.status).toBe(200);
    expect(await readOutput(res, TOOL.restore_trash_item)).toMatchObject({
      type: 'contact',
      contact: { _id: contact._id, name: 'Trashy' },
    });
    expect((await t.request('GET', `/api/v1/contacts/${contact._id}`, { token: org.token })).status).toBe(
      200,
    );

    const events = await eventsOf(t, org, contact._id);
    expect(events.map((e) => e.event)).toEqual(['contact.created', 'contact.deleted', 'contact.updated']);
    expect(events[1]?.data.deleted_at).toEqual(expect.any(String));
    expect(events[2]?.data).toMatchObject({ changed_fields: ['deleted_at'] });
  });

  test('follows its lead into the trash and back, and cannot be restored alone meanwhile', async ({
    t,
    org,
  }) => {
    const leadId = await newLead(t, org, 'Parent');
    const contact = await createContact(t, org, { lead_id: leadId, name: 'Child' });
    expect((await t.request('DELETE', `/api/v1/leads/${leadId}`, { token: org.token })).status).toBe(200);
    expect((await t.request('GET', `/api/v1/contacts/${contact._id}`, { token: org.token })).status).toBe(
      404,
    );
    expect((await list(t, org, `?lead_id=${leadId}`)).total).toBe(0);

    const alone = await t.request('POST', `/api/v1/trash/${contact._id}/restore`, { token: org.token });
    expect(alone.status).toBe(409);
    expect((await readError(alone, 409)).message).toBe('Restore its lead first');

    expect((await t.request('POST', `/api/v1/trash/${leadId}/restore`, { token: org.token })).status).toBe(
      200,
    );
    expect((await t.request('GET', `/api/v1/contacts/${contact._id}`, { token: org.token })).status).toBe(
      200,
    );
    expect((await list(t, org, `?lead_id=${leadId}`)).contacts.map((c) => c._id)).toEqual([contact._id]);
  });
});

describe('permissions and scopes', () => {
  test('lets a viewer read but not create', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    const leadId = await newLead(t, org);
    const res = await t.request('POST', '/api/v1/contacts', {
      token: viewer.token,
      body: { lead_id: leadId, name: 'Nope' },
    });
    expect(res.status).toBe(403);
    expect(await readError(res, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'contacts.create',
    });
    expect((await t.request('GET', '/api/v1/contacts', { token: viewer.token })).status).toBe(200);
  });

  test('lets a member create and edit but not delete; a manager deletes', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const contact = await createContact(t, member, { lead_id: await newLead(t, org), name: 'By member' });
    const patch = await t.request('PATCH', `/api/v1/contacts/${contact._id}`, {
      token: member.token,
      body: { title: 'Edited' },
    });
    expect(patch.status).toBe(200);
    const res = await t.request('DELETE', `/api/v1/contacts/${contact._id}`, { token: member.token });
    expect(res.status).toBe(403);
    expect(await readError(res, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'contacts.delete',
    });
    const manager = await t.createUser(org.orgId, 'manager');
    expect(
      (await t.request('DELETE', `/api/v1/contacts/${contact._id}`, { token: manager.token })).status,
    ).toBe(200);
  });

  test('holds a PAT to its scopes', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const readOnly = await t.createPat(org.orgId, org.ownerId, ['read:contacts']);
    const res = await t.request('POST', '/api/v1/contacts', {
      token: readOnly.token,
      body: { lead_id: leadId, name: 'Scoped' },
    });
    expect(res.status).toBe(403);
    expect((await readError(res, 403)).error).toContain('write:contacts');
    expect((await t.request('GET', '/api/v1/contacts', { token: readOnly.token })).status).toBe(200);

    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    const listed = await t.request('GET', '/api/v1/contacts', { token: leadsOnly.token });
    expect(listed.status).toBe(403);
    expect((await readError(listed, 403)).error).toContain('read:contacts');

    const writer = await t.createPat(org.orgId, org.ownerId, ['read:contacts', 'write:contacts']);
    const created = await t.request('POST', '/api/v1/contacts', {
      token: writer.token,
      body: { lead_id: leadId, name: 'Via PAT' },
    });
    expect(created.status).toBe(201);
  });
});
