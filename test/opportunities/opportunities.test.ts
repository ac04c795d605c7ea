// Locks in opportunities over REST: CRUD with defaults, merge updates, closed_at and won/lost events on status moves, contact-of-the-lead and owner checks, list filters/sort/search/paging, validation, roles, token scopes, trash with the lead cascade, and owner transfer on user deletion.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { users } from '../../core/db/schema.ts';
import {
  type Caller,
  createContact,
  createLead,
  createOpportunity,
  detailFields,
  fileTest,
  type InputOf,
  type OutputOf,
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

/** A new contact's id on the lead. */
async function newContact(t: TestContext, org: TestOrg, leadId: string, as: Caller = org): Promise<string> {
  return (await createContact(t, as, { lead_id: leadId, name: 'Jane' }))._id;
}

async function patch(
  t: TestContext,
  org: TestOrg,
  id: string,
  body: Record<string, unknown>,
  as: Caller = org,
): Promise<Response> {
  return t.request('PATCH', `/api/v1/opportunities/${id}`, { token: as.token, body });
}

async function list(t: TestContext, org: TestOrg, query: string, as: Caller = org) {
  const res = await t.request('GET', `/api/v1/opportunities${query}`, { token: as.token });
  expect(res.status, query).toBe(200);
  return readOutput(res, TOOL.list_opportunities);
}

/** Outbox rows of one record, oldest first. */
const eventsOf = (t: TestContext, org: TestOrg, id: string, orgId = org.orgId) =>
  outboxEventsOf(t, id, orgId);

describe('create and get', () => {
  test('creates an opportunity with defaults and returns it on get', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const opp = await createOpportunity(t, org, { lead_id: leadId });
    expect(opp).toMatchObject({
      lead_id: leadId,
      contact_id: null,
      note: null,
      value: 0,
      currency: 'USD',
      confidence: 0,
      status: 'active',
      pipeline_stage: null,
      expected_close_date: null,
      owner_id: org.ownerId,
      closed_at: null,
      created_by: org.ownerId,
    });
    expect(opp._id).toMatch(/^[0-9a-f]{24}$/);
    const res = await t.request('GET', `/api/v1/opportunities/${opp._id}`, { token: org.token });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.get_opportunity)).opportunity).toEqual(opp);
    const events = await eventsOf(t, org, opp._id);
    expect(events.map((e) => e.event)).toEqual(['opportunity.created']);
    expect(events[0]?.data).toMatchObject({ _id: opp._id, value: 0, status: 'active' });
  });

  test('stores every field, exact to the cent, with a contact of the lead and another owner', async ({
    t,
    org,
  }) => {
    const leadId = await newLead(t, org);
    const contactId = await newContact(t, org, leadId);
    const member = await t.createUser(org.orgId, 'member');
    const opp = await createOpportunity(t, org, {
      lead_id: leadId,
      contact_id: contactId,
      note: 'Annual licence renewal',
      value: 12500.75,
      currency: 'EUR',
      confidence: 60,
      pipeline_stage: 'Proposal sent',
      expected_close_date: '2027-02-28',
      owner_id: member.userId,
    });
    expect(opp).toMatchObject({
      contact_id: contactId,
      note: 'Annual licence renewal',
      value: 12500.75,
      currency: 'EUR',
      confidence: 60,
      pipeline_stage: 'Proposal sent',
      expected_close_date: '2027-02-28',
      owner_id: member.userId,
    });
    const big = await createOpportunity(t, org, { lead_id: leadId, value: 999999999999999.9 });
    expect(big.value).toBe(999999999999999.9);
    const cents = await createOpportunity(t, org, { lead_id: leadId, value: 0.29 });
    expect(cents.value).toBe(0.29);
  });

  test('creating a won or lost deal stamps closed_at and emits created then won/lost', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const won = await createOpportunity(t, org, { lead_id: leadId, status: 'won', value: 100 });
    expect(won.closed_at).toEqual(expect.any(String));
    expect((await eventsOf(t, org, won._id)).map((e) => e.event)).toEqual([
      'opportunity.created',
      'opportunity.won',
    ]);
    const lost = await createOpportunity(t, org, { lead_id: leadId, status: 'lost' });
    expect((await eventsOf(t, org, lost._id)).map((e) => e.event)).toEqual([
      'opportunity.created',
      'opportunity.lost',
    ]);
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
      const res = await t.request('POST', '/api/v1/opportunities', {
        token: org.token,
        body: { lead_id: leadId, value: 5 },
      });
      expect(res.status).toBe(404);
      expect((await readError(res, 404)).message).toBe('Lead not found');
    }
    expect(await outboxCount(t, org.orgId)).toBe(before);
    expect((await list(t, org, `?lead_id=${foreignLead}`)).total).toBe(0);
  });

  test('refuses a contact of another lead or organization, and a foreign or inactive owner, with field details', async ({
    t,
    org,
    other,
  }) => {
    const leadId = await newLead(t, org);
    const otherLeadContact = await newContact(t, org, await newLead(t, org, 'Sibling'));
    const foreignContact = await newContact(t, org, await newLead(t, org, 'Foreign', other), other);
    const trashedContact = await newContact(t, org, leadId);
    expect(
      (await t.request('DELETE', `/api/v1/contacts/${trashedContact}`, { token: org.token })).status,
    ).toBe(200);
    for (const contactId of [otherLeadContact, foreignContact, trashedContact]) {
      const res = await t.request('POST', '/api/v1/opportunities', {
        token: org.token,
        body: { lead_id: leadId, contact_id: contactId },
      });
      expect(res.status).toBe(400);
      expect(detailFields(await readError(res, 400))).toEqual(['contact_id']);
    }
    const deactivated = await t.createUser(org.orgId, 'member');
    await t.services.db.system
      .update(users)
      .set({ status: 'deactivated', deactivatedAt: new Date() })
      .where(eq(users.id, deactivated.userId));
    for (const ownerId of [other.ownerId, deactivated.userId]) {
      const res = await t.request('POST', '/api/v1/opportunities', {
        token: org.token,
        body: { lead_id: leadId, owner_id: ownerId, contact_id: foreignContact },
      });
      expect(res.status).toBe(400);
      expect(detailFields(await readError(res, 400)).sort()).toEqual(['contact_id', 'owner_id']);
    }
    expect((await list(t, org, `?lead_id=${leadId}`)).total).toBe(0);
  });

  test('rejects invalid fields with details and writes no event', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const before = await outboxCount(t, org.orgId);
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'lead_id'],
      [{ lead_id: 'nope' }, 'lead_id'],
      [{ lead_id: leadId, contact_id: 'nope' }, 'contact_id'],
      [{ lead_id: leadId, value: -1 }, 'value'],
      [{ lead_id: leadId, value: 1.234 }, 'value'],
      [{ lead_id: leadId, value: 1e15 }, 'value'],
      [{ lead_id: leadId, value: '100' }, 'value'],
      [{ lead_id: leadId, currency: 'usd' }, 'currency'],
      [{ lead_id: leadId, currency: 'EURO' }, 'currency'],
      [{ lead_id: leadId, confidence: 101 }, 'confidence'],
      [{ lead_id: leadId, confidence: -1 }, 'confidence'],
      [{ lead_id: leadId, confidence: 50.5 }, 'confidence'],
      [{ lead_id: leadId, status: 'open' }, 'status'],
      [{ lead_id: leadId, pipeline_stage: '' }, 'pipeline_stage'],
      [{ lead_id: leadId, pipeline_stage: 'x'.repeat(101) }, 'pipeline_stage'],
      [{ lead_id: leadId, expected_close_date: '2027-02-30' }, 'expected_close_date'],
      [{ lead_id: leadId, expected_close_date: '2027-2-3' }, 'expected_close_date'],
      [{ lead_id: leadId, expected_close_date: '2027-02-03T00:00:00Z' }, 'expected_close_date'],
      [{ lead_id: leadId, note: 'nul\u0000' }, 'note'],
      [{ lead_id: leadId, owner_id: 'nope' }, 'owner_id'],
    ];
    for (const [body, field] of cases) {
      const res = await t.request('POST', '/api/v1/opportunities', { token: org.token, body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const err = await readError(res, 400);
      expect(err.error).toBe('Validation failed');
      expect(detailFields(err), JSON.stringify(body).slice(0, 80)).toContain(field);
    }
    // Fields the server sets are unknown keys of the strict input: one root detail naming them.
    const closed = await t.request('POST', '/api/v1/opportunities', {
      token: org.token,
      body: { lead_id: leadId, closed_at: '2027-01-01T00:00:00Z' },
    });
    expect(closed.status).toBe(400);
    expect((await readError(closed, 400)).details?.[0]?.message).toContain('closed_at');
    expect(await outboxCount(t, org.orgId)).toBe(before);
  });
});

describe('update', () => {
  test('changes only sent fields and emits opportunity.updated with the diff', async ({ t, org }) => {
    const opp = await createOpportunity(t, org, {
      lead_id: await newLead(t, org),
      value: 100,
      note: 'keep',
      pipeline_stage: 'Qualify',
    });
    const res = await patch(t, org, opp._id, { value: 250.5, pipeline_stage: null, confidence: 40 });
    expect(res.status).toBe(200);
    const updated = (await readOutput(res, TOOL.update_opportunity)).opportunity;
    expect(updated).toMatchObject({ value: 250.5, note: 'keep', pipeline_stage: null, confidence: 40 });
    const events = await eventsOf(t, org, opp._id);
    expect(events.map((e) => e.event)).toEqual(['opportunity.created', 'opportunity.updated']);
    expect(events[1]?.data).toMatchObject({
      changed_fields: ['value', 'confidence', 'pipeline_stage'],
      previous_values: { value: 100, confidence: 0, pipeline_stage: 'Qualify' },
    });
    // The same values again change nothing and emit nothing; PUT merges the same way.
    const same = await t.request('PUT', `/api/v1/opportunities/${opp._id}`, {
      token: org.token,
      body: { value: 250.5, confidence: 40 },
    });
    expect(same.status).toBe(200);
    expect((await eventsOf(t, org, opp._id)).length).toBe(2);
  });

  test('emits won/lost on status moves, stamps closed_at and clears it when reopened', async ({ t, org }) => {
    const opp = await createOpportunity(t, org, { lead_id: await newLead(t, org), value: 1000 });
    const won = (await readOutput(await patch(t, org, opp._id, { status: 'won' }), TOOL.update_opportunity))
      .opportunity;
    expect(won.status).toBe('won');
    expect(won.closed_at).toEqual(expect.any(String));
    // Another change while won is an update, not another win.
    expect((await patch(t, org, opp._id, { note: 'signed' })).status).toBe(200);
    const reopened = (
      await readOutput(await patch(t, org, opp._id, { status: 'active' }), TOOL.update_opportunity)
    ).opportunity;
    expect(reopened.closed_at).toBeNull();
    expect((await patch(t, org, opp._id, { status: 'lost' })).status).toBe(200);
    const events = await eventsOf(t, org, opp._id);
    expect(events.map((e) => e.event)).toEqual([
      'opportunity.created',
      'opportunity.updated',
      'opportunity.won',
      'opportunity.updated',
      'opportunity.updated',
      'opportunity.updated',
      'opportunity.lost',
    ]);
    expect(events[1]?.data).toMatchObject({
      changed_fields: ['status', 'closed_at'],
      previous_values: { status: 'active', closed_at: null },
    });
    expect(events[2]?.data).toMatchObject({ _id: opp._id, status: 'won', previous_status: 'active' });
    expect(events[4]?.data).toMatchObject({ changed_fields: ['status', 'closed_at'], closed_at: null });
    expect(events[6]?.data).toMatchObject({ status: 'lost', previous_status: 'active', value: 1000 });
  });

  test('checks the contact against the lead, also when the deal moves to another lead', async ({
    t,
    org,
    other,
  }) => {
    const leadA = await newLead(t, org, 'A');
    const leadB = await newLead(t, org, 'B');
    const contactA = await newContact(t, org, leadA);
    const contactB = await newContact(t, org, leadB);
    const opp = await createOpportunity(t, org, { lead_id: leadA, contact_id: contactA });
    const wrong = await patch(t, org, opp._id, { contact_id: contactB });
    expect(wrong.status).toBe(400);
    expect(detailFields(await readError(wrong, 400))).toEqual(['contact_id']);
    // Moving with the old contact left in place is refused: it belongs to lead A.
    const moveOnly = await patch(t, org, opp._id, { lead_id: leadB });
    expect(moveOnly.status).toBe(400);
    expect(detailFields(await readError(moveOnly, 400))).toEqual(['contact_id']);
    const moved = await patch(t, org, opp._id, { lead_id: leadB, contact_id: contactB });
    expect(moved.status).toBe(200);
    expect((await readOutput(moved, TOOL.update_opportunity)).opportunity).toMatchObject({
      lead_id: leadB,
      contact_id: contactB,
    });
    const foreignLead = await newLead(t, org, 'Foreign', other);
    const foreign = await patch(t, org, opp._id, { lead_id: foreignLead, contact_id: null });
    expect(foreign.status).toBe(400);
    expect(detailFields(await readError(foreign, 400))).toEqual(['lead_id']);
    const cleared = await patch(t, org, opp._id, { contact_id: null });
    expect((await readOutput(cleared, TOOL.update_opportunity)).opportunity.contact_id).toBeNull();
  });

  test('validates update input and answers 404 for unknown or foreign ids', async ({ t, org, other }) => {
    const opp = await createOpportunity(t, org, { lead_id: await newLead(t, org) });
    const bad = await patch(t, org, opp._id, {
      value: 1.001,
      currency: 'us',
      status: 'done',
      created_by: 'x',
    });
    expect(bad.status).toBe(400);
    expect(detailFields(await readError(bad, 400)).sort()).toEqual(['(root)', 'currency', 'status', 'value']);
    const foreign = await createOpportunity(t, other, { lead_id: await newLead(t, org, 'F', other) });
    for (const method of ['GET', 'PATCH', 'PUT', 'DELETE']) {
      const res = await t.request(method, `/api/v1/opportunities/${foreign._id}`, {
        token: org.token,
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: { value: 1 } }),
      });
      expect(res.status, method).toBe(404);
    }
    expect((await eventsOf(t, org, foreign._id, other.orgId)).map((e) => e.event)).toEqual([
      'opportunity.created',
    ]);
    expect((await t.request('GET', '/api/v1/opportunities/not-an-id', { token: org.token })).status).toBe(
      400,
    );
  });
});

describe('list', () => {
  let listOrg: TestOrg;
  let leadA: string;
  let leadB: string;
  let contactA: string;
  let member: { userId: string; token: string };

  test.beforeAll(async ({ t, org }) => {
    listOrg = await t.createOrg({ name: 'List Org' });
    member = await t.createUser(listOrg.orgId, 'member');
    leadA = await newLead(t, org, 'Lead A', listOrg);
    leadB = await newLead(t, org, 'Lead B', listOrg);
    contactA = await newContact(t, org, leadA, listOrg);
    const deals: InputOf<'create_opportunity'>[] = [
      {
        lead_id: leadA,
        note: 'Alpha renewal',
        value: 500,
        confidence: 20,
        expected_close_date: '2027-03-01',
      },
      {
        lead_id: leadA,
        contact_id: contactA,
        note: 'Beta upsell',
        value: 1500.5,
        confidence: 80,
        pipeline_stage: 'Negotiation',
        expected_close_date: '2027-01-15',
      },
      {
        lead_id: leadB,
        note: 'Gamma pilot',
        value: 50,
        confidence: 50,
        status: 'won',
        owner_id: member.userId,
      },
    ];
    for (const body of deals) await createOpportunity(t, listOrg, body);
  });

  const notes = (l: OutputOf<'list_opportunities'>) => l.opportunities.map((o) => o.note);

  test('pages newest first with total and totalPages', async ({ t, org }) => {
    const first = await list(t, org, '?limit=2', listOrg);
    expect(first).toMatchObject({ total: 3, page: 1, limit: 2, totalPages: 2 });
    expect(notes(first)).toEqual(['Gamma pilot', 'Beta upsell']);
    expect(notes(await list(t, org, '?limit=2&page=2', listOrg))).toEqual(['Alpha renewal']);
    expect(notes(await list(t, org, '?page=3', listOrg))).toEqual([]);
  });

  test('sorts by the allowed fields and rejects others and limits above 100', async ({ t, org }) => {
    const sorted = async (s: string) => notes(await list(t, org, `?sort=${s}`, listOrg));
    expect(await sorted('value')).toEqual(['Gamma pilot', 'Alpha renewal', 'Beta upsell']);
    expect(await sorted('-value')).toEqual(['Beta upsell', 'Alpha renewal', 'Gamma pilot']);
    expect(await sorted('-confidence')).toEqual(['Beta upsell', 'Gamma pilot', 'Alpha renewal']);
    expect(await sorted('expected_close_date')).toEqual(['Beta upsell', 'Alpha renewal', 'Gamma pilot']);
    expect(await sorted('-expected_close_date')).toEqual(['Alpha renewal', 'Beta upsell', 'Gamma pilot']);
    expect(await sorted('created_at')).toEqual(['Alpha renewal', 'Beta upsell', 'Gamma pilot']);
    expect((await list(t, org, '?sort=-updated_at', listOrg)).total).toBe(3);
    for (const query of [
      '?sort=note',
      '?limit=101',
      '?page=0',
      '?status=open',
      '?owner_id=nope',
      '?min_value=abc',
      '?min_value=-1',
      '?expected_close_before=2027-13-01',
    ]) {
      const res = await t.request('GET', `/api/v1/opportunities${query}`, { token: listOrg.token });
      expect(res.status, query).toBe(400);
    }
  });

  test('filters by lead, contact, status, owner, close dates and value, and searches note and stage', async ({
    t,
    org,
  }) => {
    const q = async (query: string) => notes(await list(t, org, query, listOrg)).sort();
    expect(await q(`?lead_id=${leadA}`)).toEqual(['Alpha renewal', 'Beta upsell']);
    expect(await q(`?contact_id=${contactA}`)).toEqual(['Beta upsell']);
    expect(await q('?status=won')).toEqual(['Gamma pilot']);
    expect(await q(`?owner_id=${member.userId}`)).toEqual(['Gamma pilot']);
    expect(await q(`?owner_id=${listOrg.ownerId}&status=active`)).toEqual(['Alpha renewal', 'Beta upsell']);
    expect(await q('?expected_close_after=2027-02-01')).toEqual(['Alpha renewal']);
    expect(await q('?expected_close_before=2027-01-15')).toEqual(['Beta upsell']);
    expect(await q('?min_value=500&max_value=1500.5')).toEqual(['Alpha renewal', 'Beta upsell']);
    expect(await q('?max_value=100')).toEqual(['Gamma pilot']);
    expect(await q('?search=renew')).toEqual(['Alpha renewal']);
    expect(await q('?search=negotiation')).toEqual(['Beta upsell']);
    expect(await q('?search=nothing')).toEqual([]);
    expect((await list(t, org, '?search=alpha', org)).total).toBe(0);
  });
});

describe('delete and trash', () => {
  test('moves an opportunity to the trash and restores it with opportunity.updated', async ({ t, org }) => {
    const opp = await createOpportunity(t, org, { lead_id: await newLead(t, org), value: 10 });
    const del = await t.request('DELETE', `/api/v1/opportunities/${opp._id}`, { token: org.token });
    expect(del.status).toBe(200);
    expect(await readOutput(del, TOOL.delete_opportunity)).toEqual({
      message: 'Opportunity moved to the trash',
    });
    expect((await t.request('GET', `/api/v1/opportunities/${opp._id}`, { token: org.token })).status).toBe(
      404,
    );
    const trash = await readOutput(
      await t.request('GET', '/api/v1/trash?type=opportunity', { token: org.token }),
      TOOL.list_trash,
    );
    expect(trash.items).toContainEqual(expect.objectContaining({ type: 'opportunity', _id: opp._id }));

    const res = await t.request('POST', `/api/v1/trash/${opp._id}/restore`, { token: org.token });
    expect(res.status).toBe(200);
    expect(await readOutput(res, TOOL.restore_trash_item)).toMatchObject({
      type: 'opportunity',
      opportunity: { _id: opp._id, value: 10 },
    });
    expect((await t.request('GET', `/api/v1/opportunities/${opp._id}`, { token: org.token })).status).toBe(
      200,
    );
    const events = await eventsOf(t, org, opp._id);
    expect(events.map((e) => e.event)).toEqual(['opportunity.created', 'opportunity.updated']);
    expect(events[1]?.data).toMatchObject({ changed_fields: ['deleted_at'] });
  });

  test('follows its lead into the trash and back, and cannot be restored alone meanwhile', async ({
    t,
    org,
  }) => {
    const leadId = await newLead(t, org, 'Parent');
    const opp = await createOpportunity(t, org, { lead_id: leadId, value: 99 });
    expect((await t.request('DELETE', `/api/v1/leads/${leadId}`, { token: org.token })).status).toBe(200);
    expect((await t.request('GET', `/api/v1/opportunities/${opp._id}`, { token: org.token })).status).toBe(
      404,
    );
    expect((await list(t, org, `?lead_id=${leadId}`)).total).toBe(0);
    const alone = await t.request('POST', `/api/v1/trash/${opp._id}/restore`, { token: org.token });
    expect(alone.status).toBe(409);
    expect((await readError(alone, 409)).message).toBe('Restore its lead first');
    expect((await t.request('POST', `/api/v1/trash/${leadId}/restore`, { token: org.token })).status).toBe(
      200,
    );
    expect((await list(t, org, `?lead_id=${leadId}`)).opportunities.map((o) => o._id)).toEqual([opp._id]);
  });

  test("moves a deleted user's opportunities to the heir with opportunity.updated", async ({ t, org }) => {
    const leaving = await t.createUser(org.orgId, 'member');
    const opp = await createOpportunity(t, org, { lead_id: await newLead(t, org), owner_id: leaving.userId });
    const res = await t.request('DELETE', `/api/v1/users/${leaving.userId}`, {
      token: org.token,
      body: { transfer_to_user_id: org.ownerId },
    });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
    const after = await t.request('GET', `/api/v1/opportunities/${opp._id}`, { token: org.token });
    expect((await readOutput(after, TOOL.get_opportunity)).opportunity.owner_id).toBe(org.ownerId);
    const last = (await eventsOf(t, org, opp._id)).at(-1);
    expect(last).toMatchObject({
      event: 'opportunity.updated',
      data: { changed_fields: ['owner_id'], previous_values: { owner_id: leaving.userId } },
    });
  });
});

describe('owner deletion with the data', () => {
  test("moves a deleted user's opportunities to the trash without an event, restorable by the restorer", async ({
    t,
    org,
  }) => {
    const leaving = await t.createUser(org.orgId, 'member');
    const opp = await createOpportunity(t, org, { lead_id: await newLead(t, org), owner_id: leaving.userId });
    const res = await t.request('DELETE', `/api/v1/users/${leaving.userId}`, {
      token: org.token,
      body: { acknowledge_data_deletion: true },
    });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
    expect((await t.request('GET', `/api/v1/opportunities/${opp._id}`, { token: org.token })).status).toBe(
      404,
    );
    expect((await eventsOf(t, org, opp._id)).map((e) => e.event)).toEqual(['opportunity.created']);
    const restored = await t.request('POST', `/api/v1/trash/${opp._id}/restore`, { token: org.token });
    expect(restored.status).toBe(200);
    expect(await readOutput(restored, TOOL.restore_trash_item)).toMatchObject({
      opportunity: { _id: opp._id, owner_id: org.ownerId },
    });
    expect((await eventsOf(t, org, opp._id)).at(-1)?.data).toMatchObject({
      changed_fields: ['deleted_at', 'owner_id'],
      previous_values: { owner_id: leaving.userId },
    });
  });
});

describe('permissions and scopes', () => {
  test('lets a viewer read but not create', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    const res = await t.request('POST', '/api/v1/opportunities', {
      token: viewer.token,
      body: { lead_id: await newLead(t, org) },
    });
    expect(res.status).toBe(403);
    expect(await readError(res, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'opportunities.create',
    });
    expect((await t.request('GET', '/api/v1/opportunities', { token: viewer.token })).status).toBe(200);
  });

  test('lets a member create and edit but not delete; a manager deletes', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const opp = await createOpportunity(t, member, { lead_id: await newLead(t, org) });
    expect(opp.owner_id).toBe(member.userId);
    expect((await patch(t, org, opp._id, { status: 'won' }, member)).status).toBe(200);
    const res = await t.request('DELETE', `/api/v1/opportunities/${opp._id}`, { token: member.token });
    expect(res.status).toBe(403);
    expect(await readError(res, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'opportunities.delete',
    });
    const manager = await t.createUser(org.orgId, 'manager');
    expect(
      (await t.request('DELETE', `/api/v1/opportunities/${opp._id}`, { token: manager.token })).status,
    ).toBe(200);
  });

  test('holds a PAT to its scopes', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const readOnly = await t.createPat(org.orgId, org.ownerId, ['read:opportunities']);
    const res = await t.request('POST', '/api/v1/opportunities', {
      token: readOnly.token,
      body: { lead_id: leadId },
    });
    expect(res.status).toBe(403);
    expect((await readError(res, 403)).error).toContain('write:opportunities');
    expect((await t.request('GET', '/api/v1/opportunities', { token: readOnly.token })).status).toBe(200);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    expect((await t.request('GET', '/api/v1/opportunities', { token: leadsOnly.token })).status).toBe(403);
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:opportunities', 'write:opportunities']);
    const created = await t.request('POST', '/api/v1/opportunities', {
      token: writer.token,
      body: { lead_id: leadId, value: 3 },
    });
    expect(created.status).toBe(201);
  });
});
