// Locks in that hostile strings sent as smart-view values, fields, activity values, sort fields and columns through every field_type/operator combination are either refused with a 400 or matched literally (as the reference evaluator says), and never touch other data.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { activities } from '../../tools/activities/tables.ts';
import { contacts } from '../../tools/contacts/tables.ts';
import { leads } from '../../tools/leads/tables.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import { FIELD_CATALOGUE, OPS } from '../../tools/smart-views/query/catalogue.ts';
import { smartViewQuerySchema } from '../../tools/smart-views/query/filter-schema.ts';
import { tasks } from '../../tools/tasks/tables.ts';
import { seedActivities } from '../activities/seed.ts';
import { seedContacts } from '../contacts/seed.ts';
import { seedCustomActivityTypes } from '../custom-activity-types/seed.ts';
import { fileTest, readOutput, type TestContext, type TestOrg, TOOL } from '../fixtures/index.ts';
import { seedLeads } from '../leads/seed.ts';
import { seedOpportunities } from '../opportunities/seed.ts';
import { seedTasks } from '../tasks/seed.ts';
import { evaluateSmartViewQuery } from './evaluate.ts';

let customTypeId = '';

const PAYLOADS = [
  "'; drop table leads; --",
  "' or '1'='1",
  '%',
  '_',
  '\\',
  '$1',
  ')) or true --',
  'ünïcödé ✓ 日本語',
  ':*',
  "' union select id, org_id from leads --",
  '%_%',
  "\\'",
  '"; select pg_sleep(1); --',
  '*/ or 1=1 /*',
];

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'starter' });

test.beforeAll(async ({ t, org, other }) => {
  await seed(t, org, other);
});

async function seed(t: TestContext, org: TestOrg, other: TestOrg): Promise<void> {
  const names = ['Plain', '100% sure', 'snake_case', 'back\\slash', "O'Brien", 'dollar $1'];
  const ids = names.map(() => newId());
  await seedLeads(
    t,
    org.orgId,
    names.map((name, i) => ({
      id: ids[i] ?? '',
      name,
      description: i % 2 === 0 ? name : null,
      tags: [name],
      custom: { note_text: name, size: i },
    })),
  );
  await seedLeads(t, other.orgId, [{ name: "' or '1'='1" }]);
  const lead = (i: number) => ids[i % ids.length] ?? '';
  await seedContacts(
    t,
    org.orgId,
    names.map((name, i) => ({
      leadId: lead(i),
      name,
      title: name,
      emails: [{ email: `${name}@x.test`, type: 'work' }],
      phones: [{ phone: name, type: 'work' }],
    })),
  );
  await seedOpportunities(
    t,
    org.orgId,
    names.map((name, i) => ({
      leadId: lead(i),
      note: name,
      currency: name,
    })),
  );
  await seedTasks(
    t,
    org.orgId,
    names.map((name, i) => ({ leadId: lead(i), text: name })),
  );
  customTypeId = newId();
  await seedCustomActivityTypes(t, org.orgId, [{ id: customTypeId, name: 'Visit', fields: [] }]);
  await seedActivities(
    t,
    org.orgId,
    names.flatMap((name, i) => [
      { leadId: lead(i), type: 'call', fields: { outcome: name } },
      {
        leadId: lead(i),
        type: 'custom',
        customActivityTypeId: customTypeId,
        fields: { outcome: name },
      },
    ]),
  );
}

async function storedData(t: TestContext, org: TestOrg) {
  const db = t.services.db.system;
  return {
    leads: await db.select().from(leads).where(eq(leads.orgId, org.orgId)),
    contacts: await db.select().from(contacts).where(eq(contacts.orgId, org.orgId)),
    opportunities: await db.select().from(opportunities).where(eq(opportunities.orgId, org.orgId)),
    tasks: await db.select().from(tasks).where(eq(tasks.orgId, org.orgId)),
    activities: await db.select().from(activities).where(eq(activities.orgId, org.orgId)),
  };
}
let data: Awaited<ReturnType<typeof storedData>>;

let accepted = 0;
let refused = 0;

/** Creates the view: a 400 is fine; a 201 must run (200) and return exactly what the evaluator says. */
async function probe(t: TestContext, org: TestOrg, body: Record<string, unknown>): Promise<number> {
  const res = await t.request('POST', '/api/v1/smart-views', { token: org.token, body });
  if (res.status === 400) {
    refused++;
    return 400;
  }
  expect(res.status, JSON.stringify(body)).toBe(201);
  accepted++;
  const view = (await readOutput(res, TOOL.create_smart_view, 201)).smart_view;
  const run = await t.request('GET', `/api/v1/smart-views/${view._id}/results?limit=100`, {
    token: org.token,
  });
  expect(run.status, JSON.stringify(body)).toBe(200);
  const got = (await readOutput(run, TOOL.run_smart_view)).leads.map((l) => l._id).sort();
  const query = smartViewQuerySchema.parse(body.query);
  expect(got, JSON.stringify(body.query)).toEqual([...evaluateSmartViewQuery(query, data)].sort());
  return 201;
}

function valueFor(op: string, payload: string): unknown {
  if (op === 'in' || op === 'not_in') return [payload];
  if (op === 'between') return [payload, payload];
  if (op === 'is_empty' || op === 'is_not_empty') return payload;
  return payload;
}

/** Every payload in one `or` view; when that is refused, each payload on its own. */
async function probeAll(
  t: TestContext,
  org: TestOrg,
  makeFilter: (payload: string, index: number) => Record<string, unknown>,
): Promise<void> {
  const filters = PAYLOADS.map((p, i) => ({ id: `p${i}`, ...makeFilter(p, i) }));
  const status = await probe(t, org, { name: 'probe', query: { filters, logic: 'or' } });
  if (status === 201) return;
  for (const filter of filters)
    await probe(t, org, { name: 'probe', query: { filters: [filter], logic: 'and' } });
}

const FIELDS: [string, string][] = [
  ...(['lead', 'contact', 'opportunity', 'task'] as const).flatMap((type) =>
    Object.keys(FIELD_CATALOGUE[type]).map((field): [string, string] => [type, field]),
  ),
  ['custom_field', 'note_text'],
  ['custom_field', 'size'],
];

describe('hostile input', () => {
  test.beforeAll(async ({ t, org }) => {
    data = await storedData(t, org);
  });

  test('as values through every field_type and operator', { timeout: 180_000 }, async ({ t, org }) => {
    for (const [fieldType, field] of FIELDS) {
      for (const op of OPS) {
        await probeAll(t, org, (p) => ({ field_type: fieldType, field, op, value: valueFor(op, p) }));
      }
    }
  });

  test('as activity field values and activity types', { timeout: 180_000 }, async ({ t, org }) => {
    for (const activityType of ['call', customTypeId]) {
      for (const activityField of ['outcome', 'occurred_at', 'user_id', 'contact_id']) {
        for (const op of OPS) {
          await probeAll(t, org, (p) => ({
            field_type: 'activity',
            field: 'activity',
            op,
            activity_type: activityType,
            activity_field: activityField,
            activity_field_value: valueFor(op, p),
          }));
        }
      }
      for (const op of ['is_empty', 'is_not_empty']) {
        await probeAll(t, org, (p) => ({
          field_type: 'activity',
          field: 'activity',
          op,
          activity_type: activityType,
          value: p,
        }));
      }
    }
    for (const p of PAYLOADS) {
      const base = { id: 'a', field_type: 'activity', field: 'activity', op: 'is_not_empty' };
      expect(
        await probe(t, org, { name: 'x', query: { filters: [{ ...base, activity_type: p }], logic: 'and' } }),
      ).toBe(400);
      expect(
        await probe(t, org, {
          name: 'x',
          query: {
            filters: [
              { ...base, op: 'eq', activity_type: 'call', activity_field: p, activity_field_value: 'x' },
            ],
            logic: 'and',
          },
        }),
      ).toBe(400);
    }
  });

  test('as field names, sort fields and display columns (refused)', async ({ t, org }) => {
    for (const p of PAYLOADS) {
      for (const fieldType of ['lead', 'contact', 'opportunity', 'task', 'custom_field']) {
        const query = {
          filters: [{ id: 'a', field_type: fieldType, field: p, op: 'eq', value: 'x' }],
          logic: 'and',
        };
        expect(await probe(t, org, { name: 'x', query })).toBe(400);
      }
      const empty = { filters: [], logic: 'and' };
      expect(await probe(t, org, { name: 'x', query: empty, sort: { field: p, direction: 1 } })).toBe(400);
      expect(await probe(t, org, { name: 'x', query: empty, display_columns: [p] })).toBe(400);
      expect(await probe(t, org, { name: 'x', query: { ...empty, logic: p } })).toBe(400);
    }
  });

  test('as names and filter ids (stored literally)', async ({ t, org }) => {
    for (const p of PAYLOADS) {
      const query = {
        filters: [{ id: p, field_type: 'lead', field: 'name', op: 'eq', value: p }],
        logic: 'and',
      };
      const res = await t.request('POST', '/api/v1/smart-views', {
        token: org.token,
        body: { name: p, query },
      });
      expect(res.status).toBe(201);
      const view = (await readOutput(res, TOOL.create_smart_view, 201)).smart_view;
      expect(view.name).toBe(p.trim());
      expect(view.query.filters[0]?.id).toBe(p);
    }
  });

  test('leaves every table and the other organization intact', async ({ t, org, other }) => {
    // Both outcomes happened: some probes ran, some were refused.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
    const after = await storedData(t, org);
    expect(after).toEqual(data);
    const bystander = await t.services.db.system.select().from(leads).where(eq(leads.orgId, other.orgId));
    expect(bystander.map((l) => l.name)).toEqual(["' or '1'='1"]);
    // A literal `%` matches only the lead whose name holds one.
    const res = await t.request('POST', '/api/v1/smart-views', {
      token: org.token,
      body: {
        name: 'pct',
        query: {
          filters: [{ id: 'a', field_type: 'lead', field: 'name', op: 'contains', value: '%' }],
          logic: 'and',
        },
      },
    });
    const view = (await readOutput(res, TOOL.create_smart_view, 201)).smart_view;
    const run = await readOutput(
      await t.request('GET', `/api/v1/smart-views/${view._id}/results`, { token: org.token }),
      TOOL.run_smart_view,
    );
    expect(run.leads.map((l) => l.name)).toEqual(['100% sure']);
  });
});
