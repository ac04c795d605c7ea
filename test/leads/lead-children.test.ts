// Locks in that a lead's contacts, opportunities, activities and tasks follow it into the trash and back, and that a child trashed on its own earlier stays trashed.
import { eq, inArray } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { activities } from '../../tools/activities/tables.ts';
import { contacts } from '../../tools/contacts/tables.ts';
import { leads } from '../../tools/leads/tables.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import { tasks } from '../../tools/tasks/tables.ts';
import {
  createContact,
  createLead,
  createOpportunity,
  createTask,
  fileTest,
  logActivity,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

interface Family {
  leadId: string;
  contactIds: string[];
  opportunityId: string;
  activityId: string;
  taskId: string;
}

/** A lead with two contacts, a deal, a note and a task, made through the REST builders. */
async function createFamily(t: TestContext, org: TestOrg): Promise<Family> {
  const leadId = (await createLead(t, org, { name: 'Family lead' }))._id;
  const contactIds: string[] = [];
  for (const name of ['Contact one', 'Contact two']) {
    contactIds.push((await createContact(t, org, { lead_id: leadId, name }))._id);
  }
  const opportunityId = (await createOpportunity(t, org, { lead_id: leadId, value: 500 }))._id;
  const activityId = (await logActivity(t, org, { lead_id: leadId, type: 'note', note: 'hello' }))._id;
  const taskId = (await createTask(t, org, { lead_id: leadId, text: 'Follow up' }))._id;
  return { leadId, contactIds, opportunityId, activityId, taskId };
}

async function deletedAtOf(t: TestContext, f: Family): Promise<Record<string, Date | null>> {
  const db = t.services.db.system;
  const out: Record<string, Date | null> = {};
  for (const row of await db
    .select({ id: contacts.id, d: contacts.deletedAt })
    .from(contacts)
    .where(inArray(contacts.id, f.contactIds))) {
    out[row.id] = row.d;
  }
  const [opp] = await db
    .select({ d: opportunities.deletedAt })
    .from(opportunities)
    .where(eq(opportunities.id, f.opportunityId));
  const [act] = await db
    .select({ d: activities.deletedAt })
    .from(activities)
    .where(eq(activities.id, f.activityId));
  const [task] = await db.select({ d: tasks.deletedAt }).from(tasks).where(eq(tasks.id, f.taskId));
  out.opportunity = opp?.d ?? null;
  out.activity = act?.d ?? null;
  out.task = task?.d ?? null;
  return out;
}

describe('lead children and the trash', () => {
  test('trashing a lead trashes its live children with the same stamp; restoring brings them back', async ({
    t,
    org,
  }) => {
    const f = await createFamily(t, org);
    const del = await t.request('DELETE', `/api/v1/leads/${f.leadId}`, { token: org.token });
    expect(del.status).toBe(200);
    const [lead] = await t.services.db.system
      .select({ d: leads.deletedAt })
      .from(leads)
      .where(eq(leads.id, f.leadId));
    const stamp = lead?.d;
    expect(stamp).toBeInstanceOf(Date);
    const trashed = await deletedAtOf(t, f);
    for (const value of Object.values(trashed)) expect(value?.getTime()).toBe(stamp?.getTime());

    const restore = await t.request('POST', `/api/v1/trash/${f.leadId}/restore`, { token: org.token });
    expect(restore.status).toBe(200);
    expect((await readOutput(restore, TOOL.restore_trash_item)).type).toBe('lead');
    for (const value of Object.values(await deletedAtOf(t, f))) expect(value).toBeNull();
  });

  test('a child trashed before its lead stays in the trash when the lead comes back', async ({ t, org }) => {
    const f = await createFamily(t, org);
    const [first, second] = f.contactIds;
    if (!first || !second) throw new Error('fixture has two contacts');
    const earlier = new Date(Date.now() - 60_000);
    await t.services.db.system
      .update(contacts)
      .set({ deletedAt: earlier, deletedBy: org.ownerId })
      .where(eq(contacts.id, first));

    expect((await t.request('DELETE', `/api/v1/leads/${f.leadId}`, { token: org.token })).status).toBe(200);
    expect((await t.request('POST', `/api/v1/trash/${f.leadId}/restore`, { token: org.token })).status).toBe(
      200,
    );

    const after = await deletedAtOf(t, f);
    expect(after[first]?.getTime()).toBe(earlier.getTime());
    expect(after[second]).toBeNull();
    expect(after.task).toBeNull();
  });

  test("deleting a user with acknowledgement trashes their leads' children too", async ({ t, org }) => {
    const { userId } = await t.createUser(org.orgId, 'member');
    const f = await createFamily(t, org);
    await t.services.db.system.update(leads).set({ ownerId: userId }).where(eq(leads.id, f.leadId));
    const res = await t.request('DELETE', `/api/v1/users/${userId}`, {
      token: org.token,
      body: { acknowledge_data_deletion: true },
    });
    expect(res.status).toBe(200);
    const trashed = await deletedAtOf(t, f);
    for (const value of Object.values(trashed)) expect(value).toBeInstanceOf(Date);
  });
});
