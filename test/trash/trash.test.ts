// Locks in the trash over REST: deleted leads are listed newest first, restored with an lead.updated event, and handed to the restorer when their owner is gone.
import { and, eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { users } from '../../core/db/schema.ts';
import { leads } from '../../tools/leads/tables.ts';
import {
  type Caller,
  createLead,
  eventsOf as outboxEventsOf,
  readError,
  readOutput,
  readRestored,
  type TestContext,
  type TestOrg,
  TOOL,
  test,
} from '../fixtures/index.ts';

async function trash(t: TestContext, org: TestOrg, id: string, as: Caller = org): Promise<void> {
  const res = await t.request('DELETE', `/api/v1/leads/${id}`, { token: as.token });
  expect(res.status).toBe(200);
}

async function listTrash(t: TestContext, org: TestOrg, query = '', as: Caller = org) {
  return readOutput(await t.request('GET', `/api/v1/trash${query}`, { token: as.token }), TOOL.list_trash);
}

/** Outbox rows of one lead, oldest first. */
const eventsOf = (t: TestContext, leadId: string) => outboxEventsOf(t, leadId);

describe('list_trash', () => {
  test('lists deleted leads of the organization only, most recently deleted first, with paging', async ({
    t,
    org,
    other,
  }) => {
    const listOrg = await t.createOrg({ name: 'Trash List Org' });
    const manager = await t.createUser(listOrg.orgId, 'manager');
    const first = await createLead(t, listOrg, { name: 'First Gone' });
    const second = await createLead(t, listOrg, { name: 'Second Gone' });
    const kept = await createLead(t, listOrg, { name: 'Still Here' });
    await trash(t, org, first._id, listOrg);
    await trash(t, org, second._id, manager);
    const foreign = await createLead(t, other, { name: 'Foreign Gone' });
    await trash(t, org, foreign._id, other);

    const body = await listTrash(t, org, '', listOrg);
    expect(body).toMatchObject({ total: 2, page: 1, limit: 25, totalPages: 1 });
    expect(body.items).toEqual([
      {
        type: 'lead',
        _id: second._id,
        name: 'Second Gone',
        deleted_at: expect.any(String),
        deleted_by: manager.userId,
      },
      {
        type: 'lead',
        _id: first._id,
        name: 'First Gone',
        deleted_at: expect.any(String),
        deleted_by: listOrg.ownerId,
      },
    ]);
    expect(body.items.map((i) => i._id)).not.toContain(kept._id);

    const page2 = await listTrash(t, org, '?page=2&limit=1&type=lead', listOrg);
    expect(page2).toMatchObject({ total: 2, limit: 1, totalPages: 2 });
    expect(page2.items.map((i) => i._id)).toEqual([first._id]);
    const beyond = await listTrash(t, org, '?page=3&limit=1', listOrg);
    expect(beyond).toMatchObject({ items: [], total: 2, totalPages: 2 });
  });

  test('refuses an unknown type, a limit above 100 and unknown parameters', async ({ t, org }) => {
    for (const query of ['?type=contact_person', '?limit=101', '?sort=name']) {
      const res = await t.request('GET', `/api/v1/trash${query}`, { token: org.token });
      expect(res.status, query).toBe(400);
    }
  });

  test('is readable by a viewer, who may not restore', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    const lead = await createLead(t, org, { name: 'Viewer Sees' });
    await trash(t, org, lead._id);
    const body = await listTrash(t, org, '?limit=100', viewer);
    expect(body.items.map((i) => i._id)).toContain(lead._id);
    const res = await t.request('POST', `/api/v1/trash/${lead._id}/restore`, { token: viewer.token });
    expect(res.status).toBe(403);
    expect(await readError(res, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'trash.restore',
    });
  });
});

describe('restore_trash_item', () => {
  test('restores a lead with its properties and emits lead.updated for deleted_at', async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Comeback Kid', tier: 'gold' });
    await trash(t, org, lead._id);
    const res = await t.request('POST', `/api/v1/trash/${lead._id}/restore`, { token: org.token });
    expect(res.status).toBe(200);
    const body = await readRestored.lead(res);
    expect(body).toMatchObject({
      type: 'lead',
      lead: { _id: lead._id, name: 'Comeback Kid', tier: 'gold', owner_id: org.ownerId },
    });
    const get = await t.request('GET', `/api/v1/leads/${lead._id}`, { token: org.token });
    expect(get.status).toBe(200);
    expect((await listTrash(t, org, '?limit=100')).items.map((i) => i._id)).not.toContain(lead._id);

    const events = await eventsOf(t, lead._id);
    expect(events.map((e) => e.event)).toEqual(['lead.created', 'lead.deleted', 'lead.updated']);
    expect(events[2]?.data).toMatchObject({
      _id: lead._id,
      changed_fields: ['deleted_at'],
      previous_values: { deleted_at: expect.any(String) },
    });

    const again = await t.request('POST', `/api/v1/trash/${lead._id}/restore`, { token: org.token });
    expect(again.status).toBe(404);
  });

  test('gives the lead to the restorer when its owner was deleted with the data', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const lead = await createLead(t, member, { name: 'Orphaned' });
    // What deleting a user with acknowledge_data_deletion does: the user goes, their records go to the trash.
    const now = new Date();
    await t.services.db.system
      .update(leads)
      .set({ deletedAt: now, deletedBy: org.ownerId })
      .where(and(eq(leads.ownerId, member.userId), eq(leads.orgId, org.orgId)));
    await t.services.db.system.update(users).set({ deletedAt: now }).where(eq(users.id, member.userId));

    const manager = await t.createUser(org.orgId, 'manager');
    expect((await listTrash(t, org, '?limit=100')).items.map((i) => i._id)).toContain(lead._id);
    const res = await t.request('POST', `/api/v1/trash/${lead._id}/restore`, { token: manager.token });
    expect(res.status).toBe(200);
    const restored = (await readRestored.lead(res)).lead;
    expect(restored.owner_id).toBe(manager.userId);
    const events = await eventsOf(t, lead._id);
    expect(events.at(-1)).toMatchObject({
      event: 'lead.updated',
      data: {
        owner_id: manager.userId,
        changed_fields: ['deleted_at', 'owner_id'],
        previous_values: { owner_id: member.userId },
      },
    });
  });

  test('gives the lead to the restorer when its owner is deactivated, and keeps a live owner', async ({
    t,
    org,
  }) => {
    const inactive = await t.createUser(org.orgId, 'member');
    const active = await t.createUser(org.orgId, 'member');
    const a = await createLead(t, org, { name: 'Inactive Owner', owner_id: inactive.userId });
    const b = await createLead(t, org, { name: 'Active Owner', owner_id: active.userId });
    await trash(t, org, a._id);
    await trash(t, org, b._id);
    await t.services.db.system
      .update(users)
      .set({ status: 'deactivated', deactivatedAt: new Date() })
      .where(eq(users.id, inactive.userId));

    const ra = await t.request('POST', `/api/v1/trash/${a._id}/restore`, { token: org.token });
    expect((await readRestored.lead(ra)).lead.owner_id).toBe(org.ownerId);
    const rb = await t.request('POST', `/api/v1/trash/${b._id}/restore`, { token: org.token });
    expect((await readRestored.lead(rb)).lead.owner_id).toBe(active.userId);
  });

  test('answers 404 for unknown, live and other organizations’ ids, and 400 for a malformed id', async ({
    t,
    org,
    other,
  }) => {
    const live = await createLead(t, org, { name: 'Alive' });
    const foreign = await createLead(t, other, { name: 'Foreign Trash' });
    await trash(t, org, foreign._id, other);
    for (const id of ['0123456789abcdef01234567', live._id, foreign._id]) {
      const res = await t.request('POST', `/api/v1/trash/${id}/restore`, { token: org.token });
      expect(res.status, id).toBe(404);
      expect(await readError(res, 404)).toMatchObject({ error: 'Not found' });
    }
    const stillTrashed = await listTrash(t, org, '', other);
    expect(stillTrashed.items.map((i) => i._id)).toContain(foreign._id);
    const bad = await t.request('POST', '/api/v1/trash/nope/restore', { token: org.token });
    expect(bad.status).toBe(400);
  });

  test("needs the record's resource scopes when a token lists or restores it", async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Scoped Restore' });
    await trash(t, org, lead._id);
    const contactsOnly = (await t.createPat(org.orgId, org.ownerId, ['read:contacts'])).token;
    const listed = await t.request('GET', '/api/v1/trash?limit=100', { token: contactsOnly });
    expect(listed.status).toBe(200);
    expect((await readOutput(listed, TOOL.list_trash)).items.map((i) => i._id)).not.toContain(lead._id);
    const refused = await t.request('POST', `/api/v1/trash/${lead._id}/restore`, { token: contactsOnly });
    expect(refused.status).toBe(403);
    expect((await readError(refused, 403)).error).toBe('Token lacks required scope: write:leads');

    const leadsRw = (await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads'])).token;
    const visible = await t.request('GET', '/api/v1/trash?limit=100', { token: leadsRw });
    expect((await readOutput(visible, TOOL.list_trash)).items.map((i) => i._id)).toContain(lead._id);
    const res = await t.request('POST', `/api/v1/trash/${lead._id}/restore`, { token: leadsRw });
    expect(res.status).toBe(200);
  });
});
