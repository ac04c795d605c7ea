// Locks in the trash purge: records trashed longer ago than the retention are deleted for good (a lead with its children) in every organization, newer trash and live records stay, and background work runs it on a timer.
import { inArray } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { describe, expect } from 'vitest';
import { loadConfig } from '../core/config.ts';
import { newId } from '../core/ids.ts';
import { purgeTrash } from '../core/trash.ts';
import { activities } from '../tools/activities/tables.ts';
import { contacts } from '../tools/contacts/tables.ts';
import { TRASH_TYPES } from '../tools/index.ts';
import { leads } from '../tools/leads/tables.ts';
import { opportunities } from '../tools/opportunities/tables.ts';
import { tasks } from '../tools/tasks/tables.ts';
import { purgeExpiredTrash } from '../tools/trash/jobs.ts';
import { seedActivities } from './activities/seed.ts';
import { seedContacts } from './contacts/seed.ts';
import { fileTest } from './fixtures/file-test.ts';
import { createTestContext, type TestContext } from './helpers.ts';
import { seedLeads } from './leads/seed.ts';
import { seedOpportunities } from './opportunities/seed.ts';
import { seedTasks } from './tasks/seed.ts';

const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);

const test = fileTest();

interface Fixture {
  /** Ids that must be gone after a purge with 30 days' retention. */
  gone: {
    leads: string[];
    contacts: string[];
    opportunities: string[];
    activities: string[];
    tasks: string[];
  };
  /** Ids that must survive it. */
  kept: {
    leads: string[];
    contacts: string[];
    opportunities: string[];
    activities: string[];
    tasks: string[];
  };
}

/** One organization's records: an old trashed lead with children, old trashed single records, newer trash, live ones. */
async function seedOrganization(t: TestContext, orgId: string): Promise<Fixture> {
  const old = daysAgo(31);
  const recent = daysAgo(29);
  const oldLead = newId();
  const recentLead = newId();
  const liveLead = newId();
  await seedLeads(t, orgId, [
    { id: oldLead, name: 'Old trashed lead', deletedAt: old },
    { id: recentLead, name: 'Recently trashed lead', deletedAt: recent },
    { id: liveLead, name: 'Live lead' },
  ]);
  // The old lead's children went to the trash with it (same deleted_at), as core/trash.ts trashChildren does.
  const [oldLeadContact, oldContact, recentContact, liveContact] = [newId(), newId(), newId(), newId()];
  await seedContacts(t, orgId, [
    { id: oldLeadContact, leadId: oldLead, name: 'Child of old lead', deletedAt: old },
    { id: oldContact, leadId: liveLead, name: 'Old trashed contact', deletedAt: old },
    { id: recentContact, leadId: liveLead, name: 'Recent trashed contact', deletedAt: recent },
    { id: liveContact, leadId: liveLead, name: 'Live contact' },
  ]);
  const [oldLeadOpportunity, liveOpportunity] = [newId(), newId()];
  await seedOpportunities(t, orgId, [
    { id: oldLeadOpportunity, leadId: oldLead, deletedAt: old },
    { id: liveOpportunity, leadId: liveLead, contactId: oldContact },
  ]);
  const [oldLeadActivity, liveActivity] = [newId(), newId()];
  await seedActivities(t, orgId, [
    { id: oldLeadActivity, leadId: oldLead, type: 'note', fields: { note: 'x' }, deletedAt: old },
    { id: liveActivity, leadId: liveLead, type: 'note', fields: { note: 'y' } },
  ]);
  const [oldLeadTask, oldTask, recentTask, liveTask] = [newId(), newId(), newId(), newId()];
  await seedTasks(t, orgId, [
    { id: oldLeadTask, leadId: oldLead, text: 'Child task', deletedAt: old },
    { id: oldTask, leadId: liveLead, text: 'Old trashed task', deletedAt: old },
    { id: recentTask, leadId: liveLead, text: 'Recent trashed task', deletedAt: recent },
    { id: liveTask, leadId: liveLead, text: 'Live task' },
  ]);
  return {
    gone: {
      leads: [oldLead],
      contacts: [oldLeadContact, oldContact],
      opportunities: [oldLeadOpportunity],
      activities: [oldLeadActivity],
      tasks: [oldLeadTask, oldTask],
    },
    kept: {
      leads: [recentLead, liveLead],
      contacts: [recentContact, liveContact],
      opportunities: [liveOpportunity],
      activities: [liveActivity],
      tasks: [recentTask, liveTask],
    },
  };
}

const TABLES = { leads, contacts, opportunities, activities, tasks } as const;

/** The ids among `ids` that still exist, per table. */
async function existing(t: TestContext, ids: Fixture['gone']): Promise<Fixture['gone']> {
  const out: Fixture['gone'] = { leads: [], contacts: [], opportunities: [], activities: [], tasks: [] };
  for (const key of Object.keys(TABLES) as (keyof typeof TABLES)[]) {
    const table: PgTable & { id: (typeof TABLES)[typeof key]['id'] } = TABLES[key];
    const rows = await t.services.db.system
      .select({ id: table.id })
      .from(table)
      .where(inArray(table.id, ids[key]));
    out[key] = rows.map((r) => r.id).sort();
  }
  return out;
}

function sorted(f: Fixture['gone']): Fixture['gone'] {
  return {
    leads: [...f.leads].sort(),
    contacts: [...f.contacts].sort(),
    opportunities: [...f.opportunities].sort(),
    activities: [...f.activities].sort(),
    tasks: [...f.tasks].sort(),
  };
}

describe('purgeTrash', () => {
  test('deletes records trashed before the cutoff in every organization, with the children of a lead', async ({
    t,
  }) => {
    const a = await t.createOrg({ name: 'Purge A' });
    const b = await t.createOrg({ name: 'Purge B' });
    const fa = await seedOrganization(t, a.orgId);
    const fb = await seedOrganization(t, b.orgId);

    const counts = await purgeExpiredTrash(TRASH_TYPES, t.services, 30, 1);
    // Batches of one: every row still goes, one statement at a time.
    expect(counts).toMatchObject({ lead: 2, contact: 2, task: 2 });

    const empty = { leads: [], contacts: [], opportunities: [], activities: [], tasks: [] };
    expect(await existing(t, fa.gone)).toEqual(empty);
    expect(await existing(t, fb.gone)).toEqual(empty);
    expect(await existing(t, fa.kept)).toEqual(sorted(fa.kept));
    expect(await existing(t, fb.kept)).toEqual(sorted(fb.kept));
    // The live opportunity pointed at the purged contact: the foreign key cleared it, the row stayed.
    const [live] = await t.services.db.system
      .select({ contactId: opportunities.contactId })
      .from(opportunities)
      .where(inArray(opportunities.id, fa.kept.opportunities));
    expect(live?.contactId).toBeNull();

    // A second pass finds nothing more.
    const again = await purgeTrash(t.services.db.system, TRASH_TYPES, daysAgo(30), 1000);
    expect(Object.values(again).every((n) => n === 0)).toBe(true);
    expect(Object.keys(again).sort()).toEqual(TRASH_TYPES.map((x) => x.type).sort());
  });

  test('keeps everything when the cutoff is before every deletion', async ({ t }) => {
    const org = await t.createOrg({ name: 'Purge C' });
    const f = await seedOrganization(t, org.orgId);
    await purgeTrash(t.services.db.system, TRASH_TYPES, daysAgo(60), 1000);
    expect(await existing(t, f.gone)).toEqual(sorted(f.gone));
  });
});

describe('trash purge settings', () => {
  test('defaults to 30 days and an hourly run, and rejects bad values', () => {
    const config = loadConfig({});
    expect(config.trashRetentionDays).toBe(30);
    expect(config.trashPurgeIntervalMs).toBe(3_600_000);
    expect(loadConfig({ TRASH_RETENTION_DAYS: '7', TRASH_PURGE_INTERVAL_MS: '60000' })).toMatchObject({
      trashRetentionDays: 7,
      trashPurgeIntervalMs: 60_000,
    });
    expect(() => loadConfig({ TRASH_RETENTION_DAYS: '0' })).toThrow(/TRASH_RETENTION_DAYS/);
    expect(() => loadConfig({ TRASH_RETENTION_DAYS: 'soon' })).toThrow(/TRASH_RETENTION_DAYS/);
    expect(() => loadConfig({ TRASH_PURGE_INTERVAL_MS: '-5' })).toThrow(/TRASH_PURGE_INTERVAL_MS/);
  });
});

describe('the purge in background work', () => {
  test('runs on a timer when background work starts', async () => {
    const ctx = await createTestContext({ TRASH_PURGE_INTERVAL_MS: '50' }, { withWorkers: true });
    try {
      const org = await ctx.createOrg({ name: 'Timed purge' });
      const oldLead = newId();
      const recentLead = newId();
      await seedLeads(ctx, org.orgId, [
        { id: oldLead, name: 'Old', deletedAt: daysAgo(40) },
        { id: recentLead, name: 'Recent', deletedAt: daysAgo(1) },
      ]);
      await expect
        .poll(
          async () =>
            (
              await ctx.services.db.system
                .select({ id: leads.id })
                .from(leads)
                .where(inArray(leads.id, [oldLead, recentLead]))
            ).map((r) => r.id),
          { timeout: 10_000, interval: 50 },
        )
        .toEqual([recentLead]);
    } finally {
      await ctx.close();
    }
  });
});
