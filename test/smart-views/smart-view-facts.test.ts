// Locks in the smart views' facts table (smart_view_facts, migration 0033): the triggers keep exactly
// the equality facts of the live leads' additional properties and the live activities' fields through
// every write, a view narrowed by them answers what its filters alone answer, the narrowing reaches
// the table's index under row-level security, and one organization's facts never serve another's view.
import { eq, sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { rowsOf } from '../../core/db/sql.ts';
import { activities } from '../../tools/activities/tables.ts';
import { leads } from '../../tools/leads/tables.ts';
import { factCandidates, spelledFactsSchema, spellFacts } from '../../tools/smart-views/query/compile.ts';
import { smartViewQuerySchema } from '../../tools/smart-views/query/filter-schema.ts';
import { readFactCandidates } from '../../tools/smart-views/store.ts';
import { smartViewFacts } from '../../tools/smart-views/tables.ts';
import {
  createCustomActivityType,
  createLead,
  createSmartView,
  fileTest,
  type InputOf,
  logActivity,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

type Filter = InputOf<'create_smart_view'>['query']['filters'][number];

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

/** Rows of smart_view_facts that no live lead or activity holds, and facts missing from it. */
async function factsDrift(t: TestContext): Promise<unknown[]> {
  return rowsOf(
    await t.services.db.system.execute(sql`
      with expected as (
        select l.org_id, f as fact, l.id as lead_id, '' as source_id
          from leads l, smart_view_facts_of('custom', l.custom) f where l.deleted_at is null
        union all
        select a.org_id, f, a.lead_id, a.id
          from activities a,
            smart_view_facts_of(smart_view_activity_scope(a.type, a.custom_activity_type_id), a.fields) f
         where a.deleted_at is null)
      (select org_id, fact collate "default", lead_id, source_id from smart_view_facts
       except all select * from expected)
      union all
      (select * from expected
       except all select org_id, fact collate "default", lead_id, source_id from smart_view_facts)`),
  );
}

/** Names of the leads a new view with `filters` lists (through REST, as the owner). */
async function viewNames(
  t: TestContext,
  org: TestOrg,
  filters: Filter[],
  logic: 'and' | 'or' = 'and',
): Promise<string[]> {
  const view = await createSmartView(t, org, { query: { filters, logic } });
  const res = await t.request('GET', `/api/v1/smart-views/${view._id}/results?limit=100`, {
    token: org.token,
  });
  const page = await readOutput(res, TOOL.run_smart_view);
  expect(page.total).toBe(page.leads.length);
  return page.leads.map((l) => String(l.name)).sort();
}

const industry = (value: unknown, op: Filter['op'] = 'eq'): Filter => ({
  id: 'industry',
  field_type: 'custom_field',
  field: 'industry',
  op,
  value,
});
const outcome = (value: unknown, op: Filter['op'] = 'eq'): Filter => ({
  id: 'outcome',
  field_type: 'activity',
  field: 'activity',
  op,
  activity_type: 'call',
  activity_field: 'outcome',
  activity_field_value: value,
});

async function patchLead(t: TestContext, org: TestOrg, id: string, body: Record<string, unknown>) {
  const res = await t.request('PATCH', `/api/v1/leads/${id}`, { token: org.token, body });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function send(
  t: TestContext,
  org: TestOrg,
  method: 'DELETE' | 'POST' | 'PATCH',
  path: string,
  body?: unknown,
) {
  const res = await t.request(method, `/api/v1${path}`, { token: org.token, ...(body ? { body } : {}) });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
}

describe('smart view facts', () => {
  test('hold exactly the live facts, and views answer the same, through every write', {
    timeout: 180_000,
  }, async ({ t, org, other }) => {
    const long = `Software ${'x'.repeat(400)}`;
    const acme = await createLead(t, org, { name: 'Acme', industry: 'Software', size: 50 });
    const beta = await createLead(t, org, { name: 'Beta', industry: 'SOFTWARE' });
    const gamma = await createLead(t, org, { name: 'Gamma', industry: long, active: true });
    const delta = await createLead(t, org, { name: 'Delta', industry: 'Ärzte' });
    await createLead(t, org, { name: 'Epsilon', industry: 5 });
    // Another organization holding the very same facts: never in this organization's views.
    const foreign = await createLead(t, other, { name: 'Foreign', industry: 'software' });
    await logActivity(t, other, {
      type: 'call',
      lead_id: foreign._id,
      direction: 'outbound',
      outcome: 'connected',
    });

    const connected = await logActivity(t, org, {
      type: 'call',
      lead_id: acme._id,
      direction: 'outbound',
      outcome: 'connected',
    });
    await logActivity(t, org, {
      type: 'call',
      lead_id: beta._id,
      direction: 'inbound',
      outcome: 'voicemail',
    });
    await logActivity(t, org, {
      type: 'call',
      lead_id: gamma._id,
      direction: 'inbound',
      outcome: 'connected',
    });
    const visit = await createCustomActivityType(t, org, {
      name: 'Site visit',
      fields: [{ key: 'verdict', label: 'Verdict', type: 'text' }],
    });
    await logActivity(t, org, {
      type: 'custom',
      custom_activity_type_id: visit._id,
      lead_id: delta._id,
      values: { verdict: 'Promising' },
    });
    expect(await factsDrift(t)).toEqual([]);

    const views = async () => ({
      software: await viewNames(t, org, [industry('software')]),
      long: await viewNames(t, org, [industry(long.toUpperCase())]),
      unicode: await viewNames(t, org, [industry('ärzte')]),
      listed: await viewNames(t, org, [industry(['software', 'ÄRZTE'], 'in')]),
      number: await viewNames(t, org, [industry(5)]),
      connected: await viewNames(t, org, [industry('software'), outcome('connected')]),
      either: await viewNames(t, org, [industry('ärzte'), outcome('connected')], 'or'),
      custom: await viewNames(t, org, [
        {
          id: 'visit',
          field_type: 'activity',
          field: 'verdict',
          op: 'eq',
          activity_type: visit._id,
          activity_field: 'verdict',
          activity_field_value: 'PROMISING',
        },
      ]),
    });
    expect(await views()).toEqual({
      software: ['Acme', 'Beta'],
      long: ['Gamma'],
      unicode: ['Delta'],
      listed: ['Acme', 'Beta', 'Delta'],
      number: ['Epsilon'],
      connected: ['Acme'],
      either: ['Acme', 'Delta', 'Gamma'],
      custom: ['Delta'],
    });

    // Edits: a value changes case and key, a call's outcome changes, another key is added.
    await patchLead(t, org, beta._id, { industry: 'retail', region: 'software' });
    await patchLead(t, org, gamma._id, { industry: 'software' });
    await send(t, org, 'PATCH', `/activities/${connected._id}`, { outcome: 'busy' });
    expect(await factsDrift(t)).toEqual([]);
    expect((await views()).software).toEqual(['Acme', 'Gamma']);
    expect((await views()).connected).toEqual(['Gamma']);

    // Trash and restore a lead and an activity.
    await send(t, org, 'DELETE', `/leads/${gamma._id}`);
    await send(t, org, 'DELETE', `/activities/${connected._id}`);
    expect(await factsDrift(t)).toEqual([]);
    expect((await views()).software).toEqual(['Acme']);
    await send(t, org, 'POST', `/trash/${gamma._id}/restore`);
    await send(t, org, 'POST', `/trash/${connected._id}/restore`);
    expect(await factsDrift(t)).toEqual([]);
    expect((await views()).connected).toEqual(['Gamma']);

    // An activity moved to another lead takes its facts along; a purge removes a lead's and its activities'.
    await t.services.db.system
      .update(activities)
      .set({ leadId: beta._id })
      .where(eq(activities.id, connected._id));
    await send(t, org, 'PATCH', `/activities/${connected._id}`, { outcome: 'connected' });
    await patchLead(t, org, beta._id, { industry: 'Software' });
    expect(await factsDrift(t)).toEqual([]);
    expect((await views()).connected).toEqual(['Beta', 'Gamma']);
    await t.services.db.system.delete(leads).where(eq(leads.id, gamma._id));
    expect(await factsDrift(t)).toEqual([]);
    expect(await views()).toEqual({
      software: ['Acme', 'Beta'],
      long: [],
      unicode: ['Delta'],
      listed: ['Acme', 'Beta', 'Delta'],
      number: ['Epsilon'],
      connected: ['Beta'],
      either: ['Beta', 'Delta'],
      custom: ['Delta'],
    });
  });

  test('reach their index under row-level security, and show a tenant only its own', async ({
    t,
    org,
    other,
  }) => {
    const mine = await createLead(t, org, { name: 'Mine', industry: 'shipping' });
    const theirs = await createLead(t, other, { name: 'Theirs', industry: 'shipping' });
    const call = { type: 'call', direction: 'outbound', outcome: 'connected' } as const;
    await logActivity(t, org, { ...call, lead_id: mine._id });
    await logActivity(t, other, { ...call, lead_id: theirs._id });
    const query = smartViewQuerySchema.parse({
      logic: 'and',
      filters: [industry('shipping'), outcome('connected')],
    });
    const fact = sql`(select smart_view_fact('custom', 'industry', 'shipping'))`;
    const seen = (db: Executor) =>
      db
        .select({ orgId: smartViewFacts.orgId })
        .from(smartViewFacts)
        .where(sql`${smartViewFacts.fact} = ${fact}`);
    expect((await seen(t.services.db.system)).map((r) => r.orgId).sort()).toEqual(
      [org.orgId, other.orgId].sort(),
    );
    const plan = await t.services.db.withTenant(org.orgId, async (tx) => {
      expect((await seen(tx)).map((r) => r.orgId)).toEqual([org.orgId]);
      // The view's own candidates: this tenant's lead only, even when asked for the other's.
      expect(await readFactCandidates(tx, query, org.orgId, 10)).toEqual([mine._id]);
      expect(await readFactCandidates(tx, query, other.orgId, 10)).toEqual([]);
      // Would the index be used if it were the cheapest? Only a leakproof condition may run ahead of
      // the tenancy policy, so a condition the policy must see first would leave a sequential scan.
      const spell = spellFacts(query);
      if (spell === null) throw new Error('the query has served filters');
      const { facts } = spelledFactsSchema.parse(rowsOf(await tx.execute(spell))[0]);
      await tx.execute(sql`select set_config('enable_seqscan', 'off', true)`);
      return rowsOf(await tx.execute(sql`explain ${factCandidates(query, org.orgId, 10, facts)}`));
    });
    const text = z
      .array(z.object({ 'QUERY PLAN': z.string() }))
      .parse(plan)
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    // Both filters' facts are read as ranges of the index.
    expect(text.match(/Index Cond: .*fact = /g)).toHaveLength(2);
    expect(text).toMatch(/Index (Only )?Scan using smart_view_facts_org_id_fact_lead_id_source_id_pk/);
    expect(text).toMatch(/Index Cond: .*fact = /);
  });
});
