// Locks in activities over REST: CRUD per type (note, call, email, meeting, custom), the typed field rules and custom values errors, call.completed firing once, the lead timeline's order and paging, list filters, roles, scopes, plan gating, trash and the lead cascade.
import { eq, sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents, users } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import {
  type Caller,
  createContact,
  createLead,
  detailFields,
  fileTest,
  logActivity,
  eventsOf as outboxEventsOf,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro', otherPlan: 'free' })
  .extend('starter', { scope: 'file' }, async ({ t }) =>
    t.createOrg({ plan: 'starter', name: 'Starter Org' }),
  )
  .extend('member', { scope: 'file' }, async ({ t, org }) => t.createUser(org.orgId, 'member'))
  .extend('viewer', { scope: 'file' }, async ({ t, org }) => t.createUser(org.orgId, 'viewer'));

/** A new lead's id. */
async function newLead(t: TestContext, org: TestOrg, as: Caller = org, name = 'Acme'): Promise<string> {
  return (await createLead(t, as, { name }))._id;
}

async function log(
  t: TestContext,
  org: TestOrg,
  body: Record<string, unknown>,
  as: Caller = org,
): Promise<Response> {
  return t.request('POST', '/api/v1/activities', { token: as.token, body });
}

async function patch(
  t: TestContext,
  org: TestOrg,
  id: string,
  body: Record<string, unknown>,
  as: Caller = org,
): Promise<Response> {
  return t.request('PATCH', `/api/v1/activities/${id}`, { token: as.token, body });
}

async function errorFields(res: Response, status = 400): Promise<string[]> {
  return detailFields(await readError(res, status));
}

/** The events written about one activity, oldest first. */
async function eventsOf(t: TestContext, activityId: string): Promise<string[]> {
  return (await outboxEventsOf(t, activityId)).map((e) => e.event);
}

describe('notes', () => {
  test('logs, reads, updates and deletes a note, emitting activity.created', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const note = await logActivity(t, org, { type: 'note', lead_id: leadId, note: 'Spoke about pricing' });
    expect(note).toMatchObject({
      type: 'note',
      lead_id: leadId,
      note: 'Spoke about pricing',
      user_id: org.ownerId,
      created_by: org.ownerId,
      contact_id: null,
      custom_activity_type_id: null,
    });
    expect(Date.parse(note.occurred_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(await eventsOf(t, note._id)).toEqual(['activity.created']);
    const [row] = await t.services.db.system
      .select({ data: outboxEvents.data })
      .from(outboxEvents)
      .where(sql`${outboxEvents.data}->>'_id' = ${note._id}`);
    expect(row?.data).toMatchObject({ _id: note._id, type: 'note', note: 'Spoke about pricing' });

    const got = await t.request('GET', `/api/v1/activities/${note._id}`, { token: org.token });
    expect(got.status).toBe(200);
    expect((await readOutput(got, TOOL.get_activity)).activity).toEqual(note);

    const res = await patch(t, org, note._id, {
      note: 'Pricing agreed',
      occurred_at: '2024-01-02T03:04:05Z',
    });
    expect(res.status).toBe(200);
    const updated = (await readOutput(res, TOOL.update_activity)).activity;
    expect(updated).toMatchObject({ note: 'Pricing agreed', occurred_at: '2024-01-02T03:04:05.000Z' });

    const del = await t.request('DELETE', `/api/v1/activities/${note._id}`, { token: org.token });
    expect(del.status).toBe(200);
    expect(await readOutput(del, TOOL.delete_activity)).toEqual({ message: 'Activity moved to the trash' });
    expect((await t.request('GET', `/api/v1/activities/${note._id}`, { token: org.token })).status).toBe(404);
    expect((await patch(t, org, note._id, { note: 'x' })).status).toBe(404);
  });

  test('requires the note text and refuses fields of other types', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    expect(await errorFields(await log(t, org, { type: 'note', lead_id: leadId }))).toEqual(['note']);
    expect(await errorFields(await log(t, org, { type: 'note', lead_id: leadId, note: '   ' }))).toEqual([
      'note',
    ]);
    expect(
      await errorFields(await log(t, org, { type: 'note', lead_id: leadId, note: 'x'.repeat(20_001) })),
    ).toEqual(['note']);
    expect(
      await errorFields(
        await log(t, org, { type: 'note', lead_id: leadId, note: 'ok', subject: 'Hi', direction: 'inbound' }),
      ),
    ).toEqual(['direction', 'subject']);
    expect(await errorFields(await log(t, org, { type: 'memo', lead_id: leadId, note: 'x' }))).toEqual([
      'type',
    ]);
    expect(await errorFields(await log(t, org, { type: 'note', lead_id: 'nope', note: 'x' }))).toEqual([
      'lead_id',
    ]);
  });

  test('answers 404 for an unknown, trashed or foreign lead', async ({ t, org, other }) => {
    const trashed = await newLead(t, org);
    await t.request('DELETE', `/api/v1/leads/${trashed}`, { token: org.token });
    const foreign = await newLead(t, org, other);
    for (const leadId of [newId(), trashed, foreign]) {
      const res = await log(t, org, { type: 'note', lead_id: leadId, note: 'x' });
      expect(res.status).toBe(404);
      expect((await readError(res, 404)).message).toBe('Lead not found');
    }
  });

  test('checks contact_id and user_id against the lead and the organization', async ({
    t,
    org,
    other,
    member,
  }) => {
    const leadId = await newLead(t, org);
    const otherLead = await newLead(t, org);
    const contactId = (await createContact(t, org, { lead_id: leadId, name: 'Jane Doe' }))._id;
    const strangerContact = (await createContact(t, org, { lead_id: otherLead, name: 'Jane Doe' }))._id;
    const inactive = await t.createUser(org.orgId, 'member');
    await t.services.db.system
      .update(users)
      .set({ status: 'deactivated' })
      .where(eq(users.id, inactive.userId));

    const ok = await logActivity(t, org, {
      type: 'note',
      lead_id: leadId,
      note: 'x',
      contact_id: contactId,
      user_id: member.userId,
    });
    expect(ok).toMatchObject({ contact_id: contactId, user_id: member.userId, created_by: org.ownerId });
    expect(
      await errorFields(
        await log(t, org, { type: 'note', lead_id: leadId, note: 'x', contact_id: strangerContact }),
      ),
    ).toEqual(['contact_id']);
    expect(
      await errorFields(
        await log(t, org, { type: 'note', lead_id: leadId, note: 'x', user_id: inactive.userId }),
      ),
    ).toEqual(['user_id']);
    expect(
      await errorFields(
        await log(t, org, { type: 'note', lead_id: leadId, note: 'x', user_id: other.ownerId }),
      ),
    ).toEqual(['user_id']);
    expect(await errorFields(await patch(t, org, ok._id, { contact_id: strangerContact }))).toEqual([
      'contact_id',
    ]);
    const cleared = await patch(t, org, ok._id, { contact_id: null });
    expect((await readOutput(cleared, TOOL.update_activity)).activity.contact_id).toBeNull();
  });
});

describe('calls', () => {
  test('logs a completed call by default with call.completed, and validates the call fields', async ({
    t,
    org,
  }) => {
    const leadId = await newLead(t, org);
    const call = await logActivity(t, org, {
      type: 'call',
      lead_id: leadId,
      direction: 'outbound',
      duration_seconds: 125,
      outcome: 'connected',
      recording_url: 'https://rec.example.com/1.mp3',
      phone: '+1 555 0100',
    });
    expect(call).toMatchObject({
      type: 'call',
      direction: 'outbound',
      status: 'completed',
      duration_seconds: 125,
      outcome: 'connected',
      recording_url: 'https://rec.example.com/1.mp3',
      phone: '+1 555 0100',
      note: null,
    });
    expect(await eventsOf(t, call._id)).toEqual(['activity.created', 'call.completed']);

    expect(await errorFields(await log(t, org, { type: 'call', lead_id: leadId }))).toEqual(['direction']);
    expect(
      await errorFields(
        await log(t, org, {
          type: 'call',
          lead_id: leadId,
          direction: 'sideways',
          duration_seconds: 86_401,
          recording_url: 'http://insecure.example.com/a.mp3',
          outcome: 'great',
        }),
      ),
    ).toEqual(['direction', 'duration_seconds', 'outcome', 'recording_url']);
    expect(
      await errorFields(
        await log(t, org, { type: 'call', lead_id: leadId, direction: 'inbound', duration_seconds: 1.5 }),
      ),
    ).toEqual(['duration_seconds']);
  });

  test('emits call.completed once, when an in-progress call is completed', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const call = await logActivity(t, org, {
      type: 'call',
      lead_id: leadId,
      direction: 'inbound',
      status: 'in_progress',
    });
    expect(call.status).toBe('in_progress');
    expect(await eventsOf(t, call._id)).toEqual(['activity.created']);

    expect((await patch(t, org, call._id, { note: 'ringing' })).status).toBe(200);
    expect(await eventsOf(t, call._id)).toEqual(['activity.created']);

    const done = await patch(t, org, call._id, {
      status: 'completed',
      duration_seconds: 300,
      outcome: 'voicemail',
    });
    expect(done.status).toBe(200);
    expect((await readOutput(done, TOOL.update_activity)).activity).toMatchObject({
      status: 'completed',
      duration_seconds: 300,
      outcome: 'voicemail',
      note: 'ringing',
    });
    expect(await eventsOf(t, call._id)).toEqual(['activity.created', 'call.completed']);

    expect((await patch(t, org, call._id, { status: 'completed', note: 'left a message' })).status).toBe(200);
    expect(await errorFields(await patch(t, org, call._id, { status: 'in_progress' }))).toEqual(['status']);
    expect(await eventsOf(t, call._id)).toEqual(['activity.created', 'call.completed']);
  });

  test('refuses to change the type or set fields of another type on update', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const call = await logActivity(t, org, { type: 'call', lead_id: leadId, direction: 'inbound' });
    expect(await errorFields(await patch(t, org, call._id, { type: 'note' }))).toEqual(['type']);
    expect(await errorFields(await patch(t, org, call._id, { subject: 'Hi' }))).toEqual(['subject']);
    expect((await patch(t, org, call._id, { type: 'call', outcome: null })).status).toBe(200);
  });
});

describe('emails and meetings', () => {
  test('logs an email with recipients and checks subject and addresses', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const email = await logActivity(t, org, {
      type: 'email',
      lead_id: leadId,
      direction: 'outbound',
      subject: 'Proposal',
      body_text: 'Attached.',
      from: 'me@example.com',
      to: ['a@example.com', 'b@example.com'],
    });
    expect(email).toMatchObject({
      direction: 'outbound',
      subject: 'Proposal',
      body_text: 'Attached.',
      from: 'me@example.com',
      to: ['a@example.com', 'b@example.com'],
      opened_at: null,
    });
    expect(
      await errorFields(await log(t, org, { type: 'email', lead_id: leadId, direction: 'inbound' })),
    ).toEqual(['subject']);
    expect(
      await errorFields(
        await log(t, org, {
          type: 'email',
          lead_id: leadId,
          direction: 'inbound',
          subject: 's'.repeat(999),
          to: ['nope'],
        }),
      ),
    ).toEqual(['subject', 'to.0']);
    const tooMany = Array.from({ length: 51 }, (_, i) => `p${i}@example.com`);
    expect(
      await errorFields(
        await log(t, org, {
          type: 'email',
          lead_id: leadId,
          direction: 'inbound',
          subject: 's',
          to: tooMany,
        }),
      ),
    ).toEqual(['to']);
    const opened = await patch(t, org, email._id, { opened_at: '2024-05-01T10:00:00+02:00' });
    expect((await readOutput(opened, TOOL.update_activity)).activity.opened_at).toBe(
      '2024-05-01T08:00:00.000Z',
    );
  });

  test('logs a meeting at its start time and keeps ends_at after starts_at', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const meeting = await logActivity(t, org, {
      type: 'meeting',
      lead_id: leadId,
      title: 'Kick-off',
      starts_at: '2024-03-01T09:00:00Z',
      ends_at: '2024-03-01T10:00:00Z',
      location: 'Room 1',
      attendees: ['Jane', 'bob@example.com'],
    });
    expect(meeting).toMatchObject({
      title: 'Kick-off',
      starts_at: '2024-03-01T09:00:00.000Z',
      ends_at: '2024-03-01T10:00:00.000Z',
      occurred_at: '2024-03-01T09:00:00.000Z',
      location: 'Room 1',
      attendees: ['Jane', 'bob@example.com'],
      note: null,
    });
    expect(
      await errorFields(
        await log(t, org, {
          type: 'meeting',
          lead_id: leadId,
          title: 'Bad',
          starts_at: '2024-03-01T09:00:00Z',
          ends_at: '2024-03-01T08:00:00Z',
        }),
      ),
    ).toEqual(['ends_at']);
    expect(
      await errorFields(await log(t, org, { type: 'meeting', lead_id: leadId, starts_at: 'tomorrow' })),
    ).toEqual(['starts_at']);
    expect(
      await errorFields(await patch(t, org, meeting._id, { starts_at: '2024-03-01T11:00:00Z' })),
    ).toEqual(['ends_at']);
    expect(await errorFields(await patch(t, org, meeting._id, { title: null }))).toEqual(['title']);
  });
});

describe('custom activities', () => {
  let typeId: string;

  test.beforeAll(async ({ t, org }) => {
    const res = await t.request('POST', '/api/v1/custom-activity-types', {
      token: org.token,
      body: {
        name: 'Demo',
        fields: [
          { key: 'outcome', label: 'Outcome', type: 'choice', options: ['good', 'bad'], required: true },
          { key: 'seats', label: 'Seats', type: 'number' },
          { key: 'follow_up', label: 'Follow-up by', type: 'user' },
        ],
      },
    });
    expect(res.status).toBe(201);
    typeId = (await readOutput(res, TOOL.create_custom_activity_type, 201)).custom_activity_type._id;
  });

  test('logs a custom activity with values validated against its type', async ({ t, org, other, member }) => {
    const leadId = await newLead(t, org);
    const demo = await logActivity(t, org, {
      type: 'custom',
      lead_id: leadId,
      custom_activity_type_id: typeId,
      values: { outcome: 'good', seats: 12 },
    });
    expect(demo).toMatchObject({
      type: 'custom',
      custom_activity_type_id: typeId,
      values: { outcome: 'good', seats: 12, follow_up: null },
    });
    expect(await eventsOf(t, demo._id)).toEqual(['activity.created']);

    const bad = await log(t, org, {
      type: 'custom',
      lead_id: leadId,
      custom_activity_type_id: typeId,
      values: { outcome: 'meh', seats: 'ten', follow_up: other.ownerId, color: 'red' },
    });
    expect((await errorFields(bad)).sort()).toEqual([
      'values.color',
      'values.follow_up',
      'values.outcome',
      'values.seats',
    ]);
    expect(
      await errorFields(
        await log(t, org, { type: 'custom', lead_id: leadId, custom_activity_type_id: typeId }),
      ),
    ).toEqual(['values.outcome']);
    const mixed = await log(t, org, {
      type: 'custom',
      lead_id: leadId,
      user_id: other.ownerId,
      custom_activity_type_id: typeId,
      values: { outcome: 'meh' },
    });
    expect((await errorFields(mixed)).sort()).toEqual(['user_id', 'values.outcome']);
    expect(await errorFields(await log(t, org, { type: 'custom', lead_id: leadId, values: {} }))).toEqual([
      'custom_activity_type_id',
    ]);
    expect(
      await errorFields(
        await log(t, org, {
          type: 'custom',
          lead_id: leadId,
          custom_activity_type_id: newId(),
          values: { outcome: 'good' },
        }),
      ),
    ).toEqual(['custom_activity_type_id']);

    const merged = await patch(t, org, demo._id, { values: { seats: null, follow_up: member.userId } });
    expect(merged.status).toBe(200);
    expect((await readOutput(merged, TOOL.update_activity)).activity.values).toEqual({
      outcome: 'good',
      seats: null,
      follow_up: member.userId,
    });
    expect(await errorFields(await patch(t, org, demo._id, { values: { outcome: null } }))).toEqual([
      'values.outcome',
    ]);
    expect(await errorFields(await patch(t, org, demo._id, { note: 'x' }))).toEqual(['note']);
  });

  test('needs the custom_activity_types plan feature; other types work on starter', async ({
    t,
    org,
    starter,
  }) => {
    const leadId = await newLead(t, org, starter);
    const res = await log(
      t,
      org,
      { type: 'custom', lead_id: leadId, custom_activity_type_id: newId(), values: {} },
      starter,
    );
    expect(res.status).toBe(402);
    expect(await readError(res, 402)).toMatchObject({
      error: 'plan_upgrade_required',
      feature: 'custom_activity_types',
      current_plan: 'starter',
    });
    await logActivity(t, starter, { type: 'note', lead_id: leadId, note: 'Plain notes are on every plan' });
  });
});

describe('timeline and list', () => {
  test('lists a lead timeline newest first by occurred_at then id, paged and filterable by type', async ({
    t,
    org,
    other,
  }) => {
    const leadId = await newLead(t, org);
    const otherLead = await newLead(t, org);
    await logActivity(t, org, { type: 'note', lead_id: otherLead, note: 'elsewhere' });
    const at = '2024-06-01T12:00:00.000Z';
    const a = await logActivity(t, org, {
      type: 'note',
      lead_id: leadId,
      note: 'a',
      occurred_at: '2024-06-01T10:00:00Z',
    });
    const b = await logActivity(t, org, {
      type: 'call',
      lead_id: leadId,
      direction: 'inbound',
      occurred_at: at,
    });
    const c = await logActivity(t, org, { type: 'note', lead_id: leadId, note: 'c', occurred_at: at });
    const d = await logActivity(t, org, {
      type: 'email',
      lead_id: leadId,
      direction: 'inbound',
      subject: 'd',
      occurred_at: '2024-07-01T00:00:00Z',
    });
    const sameTime = [b._id, c._id].sort().reverse();

    const page1 = await t.request('GET', `/api/v1/leads/${leadId}/activities?limit=2`, { token: org.token });
    expect(page1.status).toBe(200);
    const body1 = await readOutput(page1, TOOL.list_lead_activities);
    expect(body1).toMatchObject({ total: 4, page: 1, limit: 2, totalPages: 2 });
    const page2 = await readOutput(
      await t.request('GET', `/api/v1/leads/${leadId}/activities?limit=2&page=2`, { token: org.token }),
      TOOL.list_lead_activities,
    );
    expect([...body1.activities, ...page2.activities].map((x) => x._id)).toEqual([d._id, ...sameTime, a._id]);

    const notes = await readOutput(
      await t.request('GET', `/api/v1/leads/${leadId}/activities?type=note`, { token: org.token }),
      TOOL.list_lead_activities,
    );
    expect(notes.activities.map((x) => x._id)).toEqual([c._id, a._id]);
    expect(
      (await t.request('GET', `/api/v1/leads/${leadId}/activities?limit=101`, { token: org.token })).status,
    ).toBe(400);
    expect((await t.request('GET', `/api/v1/leads/${newId()}/activities`, { token: org.token })).status).toBe(
      404,
    );
    expect(
      (await t.request('GET', `/api/v1/leads/${leadId}/activities`, { token: other.token })).status,
    ).toBe(404);
  });

  test('lists activities across leads with filters and sorts', async ({ t, org, other, member }) => {
    const leadId = await newLead(t, org);
    const early = await logActivity(t, org, {
      type: 'note',
      lead_id: leadId,
      note: 'early',
      occurred_at: '2020-01-01T00:00:00Z',
    });
    const late = await logActivity(t, org, {
      type: 'note',
      lead_id: leadId,
      note: 'late',
      occurred_at: '2020-02-01T00:00:00Z',
      user_id: member.userId,
    });
    const byLead = await readOutput(
      await t.request('GET', `/api/v1/activities?lead_id=${leadId}&sort=occurred_at`, { token: org.token }),
      TOOL.list_activities,
    );
    expect(byLead.activities.map((x) => x._id)).toEqual([early._id, late._id]);
    const defaultOrder = await readOutput(
      await t.request('GET', `/api/v1/activities?lead_id=${leadId}`, { token: org.token }),
      TOOL.list_activities,
    );
    expect(defaultOrder.activities.map((x) => x._id)).toEqual([late._id, early._id]);
    const byUser = await readOutput(
      await t.request('GET', `/api/v1/activities?lead_id=${leadId}&user_id=${member.userId}`, {
        token: org.token,
      }),
      TOOL.list_activities,
    );
    expect(byUser.activities.map((x) => x._id)).toEqual([late._id]);
    const window = await readOutput(
      await t.request(
        'GET',
        `/api/v1/activities?occurred_after=2020-01-15T00:00:00Z&occurred_before=2020-03-01T00:00:00Z`,
        { token: org.token },
      ),
      TOOL.list_activities,
    );
    expect(window.activities.map((x) => x._id)).toEqual([late._id]);
    const calls = await readOutput(
      await t.request('GET', '/api/v1/activities?type=call', { token: org.token }),
      TOOL.list_activities,
    );
    expect(calls.total).toBeGreaterThan(0);
    expect(calls.activities.every((x) => x.type === 'call')).toBe(true);
    const paged = await readOutput(
      await t.request('GET', '/api/v1/activities?limit=1', { token: org.token }),
      TOOL.list_activities,
    );
    expect(paged.totalPages).toBe(paged.total);
    expect((await t.request('GET', '/api/v1/activities?sort=note', { token: org.token })).status).toBe(400);
    expect((await t.request('GET', '/api/v1/activities?limit=101', { token: org.token })).status).toBe(400);
    const foreign = await readOutput(
      await t.request('GET', '/api/v1/activities', { token: other.token }),
      TOOL.list_activities,
    );
    expect(foreign.activities.some((x) => x.lead_id === leadId)).toBe(false);
  });
});

describe('access', () => {
  test('lets a viewer read but not write, and a member log, edit and delete', async ({
    t,
    org,
    member,
    viewer,
  }) => {
    const leadId = await newLead(t, org);
    const note = await logActivity(t, org, { type: 'note', lead_id: leadId, note: 'x' });
    const denied = await log(t, org, { type: 'note', lead_id: leadId, note: 'x' }, viewer);
    expect(denied.status).toBe(403);
    expect(await readError(denied, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'activities.create',
    });
    expect((await patch(t, org, note._id, { note: 'y' }, viewer)).status).toBe(403);
    const viewerDelete = await t.request('DELETE', `/api/v1/activities/${note._id}`, { token: viewer.token });
    expect(await readError(viewerDelete, 403)).toMatchObject({
      required_permission: 'activities.delete',
    });
    expect((await t.request('GET', `/api/v1/activities/${note._id}`, { token: viewer.token })).status).toBe(
      200,
    );
    expect(
      (await t.request('GET', `/api/v1/leads/${leadId}/activities`, { token: viewer.token })).status,
    ).toBe(200);

    const mine = await logActivity(t, member, { type: 'note', lead_id: leadId, note: 'by member' });
    expect(mine.user_id).toBe(member.userId);
    expect((await patch(t, org, mine._id, { note: 'edited' }, member)).status).toBe(200);
    expect(
      (await t.request('DELETE', `/api/v1/activities/${mine._id}`, { token: member.token })).status,
    ).toBe(200);
  });

  test('holds tokens to the leads scopes', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const { token } = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await t.request('GET', `/api/v1/leads/${leadId}/activities`, { token })).status).toBe(200);
    const res = await log(t, org, { type: 'note', lead_id: leadId, note: 'x' }, { token });
    expect(res.status).toBe(403);
    expect((await readError(res, 403)).error).toContain('write:leads');
    const { token: writer } = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    await logActivity(t, { token: writer }, { type: 'note', lead_id: leadId, note: 'x' });
  });
});

describe('trash', () => {
  test('lists a deleted activity in the trash and restores it', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const note = await logActivity(t, org, { type: 'note', lead_id: leadId, note: 'keep me' });
    await t.request('DELETE', `/api/v1/activities/${note._id}`, { token: org.token });
    const trash = await readOutput(
      await t.request('GET', '/api/v1/trash?type=activity', { token: org.token }),
      TOOL.list_trash,
    );
    expect(trash.items).toContainEqual(
      expect.objectContaining({ type: 'activity', _id: note._id, name: 'note: keep me' }),
    );
    const restored = await t.request('POST', `/api/v1/trash/${note._id}/restore`, { token: org.token });
    expect(restored.status).toBe(200);
    expect(await readOutput(restored, TOOL.restore_trash_item)).toMatchObject({
      type: 'activity',
      activity: { _id: note._id, note: 'keep me' },
    });
    expect((await t.request('GET', `/api/v1/activities/${note._id}`, { token: org.token })).status).toBe(200);
  });

  test('follows its lead into the trash, refuses a restore on its own while the lead is trashed, and returns with the lead', async ({
    t,
    org,
  }) => {
    const leadId = await newLead(t, org);
    const call = await logActivity(t, org, { type: 'call', lead_id: leadId, direction: 'outbound' });
    expect((await t.request('DELETE', `/api/v1/leads/${leadId}`, { token: org.token })).status).toBe(200);
    expect((await t.request('GET', `/api/v1/activities/${call._id}`, { token: org.token })).status).toBe(404);
    const refused = await t.request('POST', `/api/v1/trash/${call._id}/restore`, { token: org.token });
    expect(refused.status).toBe(409);
    expect((await readError(refused, 409)).message).toBe('Restore its lead first');
    expect((await t.request('POST', `/api/v1/trash/${leadId}/restore`, { token: org.token })).status).toBe(
      200,
    );
    const back = await t.request('GET', `/api/v1/activities/${call._id}`, { token: org.token });
    expect(back.status).toBe(200);
  });
});
