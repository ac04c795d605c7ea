// Locks in that the smart-view SQL compiler agrees with the in-memory reference evaluator on random data sets and random filter trees of every field_type, op and logic, with and without the narrowing by the facts table.
import { and, eq, isNull } from 'drizzle-orm';
import fc from 'fast-check';
import { expect } from 'vitest';
import { organizations } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import { activities } from '../../tools/activities/tables.ts';
import { contacts } from '../../tools/contacts/tables.ts';
import { leads } from '../../tools/leads/tables.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import {
  activityFieldKind,
  FIELD_CATALOGUE,
  type FieldKind,
  OPS_BY_KIND,
  type Op,
} from '../../tools/smart-views/query/catalogue.ts';
import { compileSmartViewQuery } from '../../tools/smart-views/query/compile.ts';
import { type SmartViewQuery, smartViewQuerySchema } from '../../tools/smart-views/query/filter-schema.ts';
import { readFactCandidates } from '../../tools/smart-views/store.ts';
import { tasks } from '../../tools/tasks/tables.ts';
import { seedActivities } from '../activities/seed.ts';
import { seedContacts } from '../contacts/seed.ts';
import { seedCustomActivityTypes } from '../custom-activity-types/seed.ts';
import { type TestContext, test } from '../fixtures/index.ts';
import { seedLeads } from '../leads/seed.ts';
import { seedOpportunities } from '../opportunities/seed.ts';
import { seedTasks } from '../tasks/seed.ts';
import { evaluateSmartViewQuery } from './evaluate.ts';

const USERS = ['a0a0a0a0a0a0a0a0a0a0a0a0', 'b1b1b1b1b1b1b1b1b1b1b1b1'] as const;
// Short ASCII words, some with LIKE wildcards and the escape character, so escaping is exercised.
const WORDS = [
  'ann',
  'Ann Smith',
  'bob',
  'a%b',
  'x_y',
  'b\\c',
  '',
  'won',
  'lost',
  'active',
  'new',
  'qualified',
];
const STATUSES = ['new', 'contacted', 'qualified', 'lost'];
const TAGS = ['a', 'b', 'c', 'A'];
const NUMBERS = [-1, 0, 5, 10, 50, 99.5, 100, 1000];
const INSTANTS = ['2026-01-01T00:00:00.000Z', '2026-01-02T12:00:00.000Z', '2026-01-05T00:00:00.000Z'];
const FILTER_INSTANTS = [...INSTANTS, '2026-01-02', '2026-01-03T00:00:00+02:00', '2025-12-31'];
const DATES = ['2026-01-01', '2026-02-15', '2026-03-01'];
const CUSTOM_KEYS = ['k1', 'k2'];
const ACTIVITY_KEYS = ['outcome', 'duration_seconds', 'subject'];
const ACTIVITY_TYPES = ['note', 'call', 'email', 'meeting', 'CUSTOM'];
const CUSTOM_PLACEHOLDER = 'CUSTOM';

const word = fc.constantFrom(...WORDS);
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 3 });
const jsonScalar = fc.oneof(word, fc.constantFrom(...NUMBERS), fc.boolean(), fc.constant(null));
const instant = fc.constantFrom(...INSTANTS).map((s) => new Date(s));
const trashed = fc.constantFrom(null, null, null, null, new Date('2026-01-09T00:00:00Z'));

const leadArb = fc.record({
  name: word.filter((w) => w !== ''),
  description: nullable(word),
  url: nullable(word),
  status: fc.constantFrom(...STATUSES),
  ownerId: nullable(fc.constantFrom(...USERS)),
  tags: fc.uniqueArray(fc.constantFrom(...TAGS), { maxLength: 3 }),
  custom: fc.dictionary(fc.constantFrom(...CUSTOM_KEYS), jsonScalar, { maxKeys: 2, noNullPrototype: true }),
  createdAt: instant,
  convertedAt: nullable(instant),
  deletedAt: trashed,
});
const contactArb = fc.record({
  lead: fc.nat(7),
  name: word.filter((w) => w !== ''),
  title: nullable(word),
  emails: fc.array(
    word.map((w) => ({ email: w, type: 'work' })),
    { maxLength: 2 },
  ),
  phones: fc.array(
    fc.constantFrom('+1 555', '0100', '').map((p) => ({ phone: p, type: 'mobile' })),
    {
      maxLength: 2,
    },
  ),
  deletedAt: trashed,
});
const opportunityArb = fc.record({
  lead: fc.nat(7),
  status: fc.constantFrom('active', 'won', 'lost'),
  value: fc.constantFrom(...NUMBERS.filter((n) => n >= 0)),
  confidence: fc.integer({ min: 0, max: 100 }),
  currency: fc.constantFrom('USD', 'EUR', 'usd'),
  pipelineStage: nullable(word),
  expectedCloseDate: nullable(fc.constantFrom(...DATES)),
  ownerId: nullable(fc.constantFrom(...USERS)),
  note: nullable(word),
  deletedAt: trashed,
});
const taskArb = fc.record({
  lead: fc.option(fc.nat(7), { nil: null, freq: 6 }),
  text: word.filter((w) => w !== ''),
  dueAt: nullable(instant),
  isComplete: fc.boolean(),
  assignedTo: nullable(fc.constantFrom(...USERS)),
  deletedAt: trashed,
});
const activityArb = fc.record({
  lead: fc.nat(7),
  type: fc.constantFrom(...ACTIVITY_TYPES),
  occurredAt: instant,
  userId: nullable(fc.constantFrom(...USERS)),
  withContact: fc.boolean(),
  fields: fc.dictionary(fc.constantFrom(...ACTIVITY_KEYS), jsonScalar, { maxKeys: 3, noNullPrototype: true }),
  deletedAt: trashed,
});
const dataArb = fc.record({
  leads: fc.array(leadArb, { minLength: 1, maxLength: 8 }),
  contacts: fc.array(contactArb, { maxLength: 6 }),
  opportunities: fc.array(opportunityArb, { maxLength: 6 }),
  tasks: fc.array(taskArb, { maxLength: 6 }),
  activities: fc.array(activityArb, { maxLength: 8 }),
});
type Data = typeof dataArb extends fc.Arbitrary<infer D> ? D : never;

/** A scalar value for a field of `kind` under `op`. */
function scalarArb(kind: FieldKind, op: Op): fc.Arbitrary<unknown> {
  switch (kind) {
    case 'text':
    case 'text_list':
      return word;
    case 'keyword':
      // Statuses in any case (equality is case-insensitive), plus words that are no status.
      return fc.oneof(
        fc.constantFrom(...STATUSES, 'active', 'won', 'lost'),
        fc.constantFrom('QUALIFIED', 'Won', 'New', 'LOST'),
        word,
      );
    case 'id':
      return fc.constantFrom(...USERS, '', 'nobody');
    case 'number':
      return fc.constantFrom(...NUMBERS);
    case 'boolean':
      return fc.boolean();
    case 'timestamp':
      return fc.constantFrom(...FILTER_INSTANTS);
    case 'date':
      return fc.constantFrom(...DATES, '2025-12-31');
    case 'tags':
      return fc.constantFrom(...TAGS, 'z');
    case 'json':
      if (op === 'contains' || op === 'not_contains' || op === 'starts_with') return word;
      if (['gt', 'gte', 'lt', 'lte', 'between'].includes(op)) return fc.constantFrom(...NUMBERS);
      if (op === 'in' || op === 'not_in') return fc.oneof(word, fc.constantFrom(...NUMBERS));
      return fc.oneof(word, fc.constantFrom(...NUMBERS), fc.boolean());
  }
}

function sortKey(kind: FieldKind, v: unknown): number | string {
  if (typeof v === 'number') return v;
  if (kind === 'timestamp') {
    const s = String(v);
    return Date.parse(s.length === 10 ? `${s}T00:00:00Z` : s);
  }
  return String(v);
}

function valueArb(kind: FieldKind, op: Op): fc.Arbitrary<unknown> {
  if (op === 'is_empty' || op === 'is_not_empty') return fc.constant(undefined);
  if (op === 'in' || op === 'not_in') return fc.array(scalarArb(kind, op), { minLength: 1, maxLength: 3 });
  if (op === 'between') {
    return fc
      .tuple(scalarArb(kind, op), scalarArb(kind, op))
      .map(([a, b]) => (sortKey(kind, a) <= sortKey(kind, b) ? [a, b] : [b, a]));
  }
  return scalarArb(kind, op);
}

/** field, kind and a matching op/value for one field_type. */
function fieldFilterArb(fieldType: 'lead' | 'contact' | 'opportunity' | 'task' | 'custom_field') {
  const fields: [string, FieldKind][] =
    fieldType === 'custom_field'
      ? CUSTOM_KEYS.map((k) => [k, 'json'])
      : Object.entries(FIELD_CATALOGUE[fieldType]).map(([f, k]): [string, FieldKind] => [f, k]);
  return fc
    .constantFrom(...fields)
    .chain(([field, kind]) =>
      fc
        .constantFrom(...OPS_BY_KIND[kind])
        .chain((op) => valueArb(kind, op).map((value) => ({ field_type: fieldType, field, op, value }))),
    );
}

const activityFilterArb = fc.constantFrom(...ACTIVITY_TYPES).chain((activityType) =>
  fc.oneof(
    fc.constantFrom('is_empty', 'is_not_empty').map((op) => ({
      field_type: 'activity',
      field: 'activity',
      op,
      activity_type: activityType,
    })),
    fc.constantFrom(...ACTIVITY_KEYS, 'occurred_at', 'user_id', 'contact_id').chain((activityField) => {
      const kind = activityFieldKind(activityField) ?? 'json';
      return fc.constantFrom(...OPS_BY_KIND[kind]).chain((op) =>
        valueArb(kind, op).map((value) => ({
          field_type: 'activity',
          field: activityField,
          op,
          activity_type: activityType,
          activity_field: activityField,
          activity_field_value: value,
        })),
      );
    }),
  ),
);

const filterArb = fc.oneof(
  fieldFilterArb('lead'),
  fieldFilterArb('custom_field'),
  fieldFilterArb('contact'),
  fieldFilterArb('opportunity'),
  fieldFilterArb('task'),
  activityFilterArb,
);
const queryArb = fc.record({
  filters: fc.array(filterArb, { maxLength: 4 }),
  logic: fc.constantFrom('and', 'or'),
});

/** Where a string of the data sits: a lead's custom field, or a field of an activity of a type. */
interface Placed {
  activityType: string | null;
  key: string;
  value: string;
}

/** The string values of the data's custom fields and activity fields, with where each sits. */
function placedStrings(data: Data): Placed[] {
  const custom = data.leads.flatMap((l) =>
    Object.entries(l.custom).flatMap(([key, value]) =>
      typeof value === 'string' ? [{ activityType: null, key, value }] : [],
    ),
  );
  const fields = data.activities.flatMap((a) =>
    Object.entries(a.fields).flatMap(([key, value]) =>
      typeof value === 'string' ? [{ activityType: a.type, key, value }] : [],
    ),
  );
  return [...custom, ...fields];
}

/**
 * An equality (or `in`) on a string of a custom field or an activity's field: a filter the facts
 * serve, most often on a string the data holds where it holds it (in another case, or beside
 * other words), so its facts do leave candidates.
 */
function servedFilterArb(placed: readonly Placed[]) {
  const somewhere = fc.record({
    activityType: fc.option(fc.constantFrom(...ACTIVITY_TYPES), { nil: null }),
    key: fc.constantFrom(...CUSTOM_KEYS, ...ACTIVITY_KEYS),
    value: word,
  });
  const place =
    placed.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...placed), weight: 3 }, somewhere) : somewhere;
  return fc
    .tuple(place, fc.constantFrom('eq', 'in'), fc.boolean(), fc.array(word, { maxLength: 2 }))
    .map(([at, op, upper, others]) => {
      const asked = upper ? at.value.toUpperCase() : at.value;
      const value = op === 'eq' ? asked : [asked, ...others];
      if (at.activityType === null) return { field_type: 'custom_field', field: at.key, op, value };
      return {
        field_type: 'activity',
        field: at.key,
        op,
        activity_type: at.activityType,
        activity_field: at.key,
        activity_field_value: value,
      };
    });
}

/**
 * A query the facts narrow: a served filter and any others (logic and), or served filters only
 * (logic or). Random queries seldom are one, and the narrowed reading tests only what the facts
 * leave open, so these check that it leaves out nothing the other filters decide.
 */
function narrowedQueryArb(placed: readonly Placed[]) {
  return fc.oneof(
    fc
      .tuple(servedFilterArb(placed), fc.array(filterArb, { minLength: 1, maxLength: 3 }))
      .map(([served, others]) => ({ filters: [served, ...others], logic: 'and' })),
    fc
      .array(servedFilterArb(placed), { minLength: 1, maxLength: 3 })
      .map((filters) => ({ filters, logic: 'or' })),
  );
}

/** A data set and four queries over it: two random, two the facts narrow. */
const caseArb = dataArb.chain((data) =>
  fc.tuple(
    fc.constant(data),
    fc.tuple(
      queryArb,
      queryArb,
      narrowedQueryArb(placedStrings(data)),
      narrowedQueryArb(placedStrings(data)),
    ),
  ),
);

/** The query with the custom activity type placeholder replaced and ids assigned, validated. */
function concreteQuery(raw: { filters: Record<string, unknown>[]; logic: string }, customTypeId: string) {
  const filters = raw.filters.map((f, i) => {
    const out: Record<string, unknown> = { ...f, id: `f${i}` };
    if (out.activity_type === CUSTOM_PLACEHOLDER) out.activity_type = customTypeId;
    if (out.value === undefined) delete out.value;
    if (out.activity_field_value === undefined) delete out.activity_field_value;
    return out;
  });
  const parsed = smartViewQuerySchema.safeParse({ filters, logic: raw.logic });
  if (!parsed.success) throw new Error(`generator made an invalid query: ${parsed.error.message}`);
  return parsed.data;
}

async function insertData(t: TestContext, data: Data): Promise<{ orgId: string; customTypeId: string }> {
  const orgId = newId();
  // A bare organization row per generated case (no owner, no session): the cases only read its data.
  await t.services.db.system
    .insert(organizations)
    .values({ id: orgId, name: 'Property org', plan: 'starter' });
  const customTypeId = newId();
  await seedCustomActivityTypes(t, orgId, [{ id: customTypeId, name: 'Visit', fields: [] }]);
  const leadIds = data.leads.map(() => newId());
  const leadOf = (i: number) => leadIds[i % leadIds.length] ?? '';
  await seedLeads(
    t,
    orgId,
    data.leads.map((l, i) => ({ ...l, id: leadIds[i] ?? '', updatedAt: l.createdAt })),
  );
  const contactIds = data.contacts.map(() => newId());
  if (data.contacts.length > 0) {
    await seedContacts(
      t,
      orgId,
      data.contacts.map(({ lead, ...c }, i) => ({ ...c, id: contactIds[i] ?? '', leadId: leadOf(lead) })),
    );
  }
  if (data.opportunities.length > 0) {
    await seedOpportunities(
      t,
      orgId,
      data.opportunities.map(({ lead, ...o }) => ({ ...o, leadId: leadOf(lead) })),
    );
  }
  if (data.tasks.length > 0) {
    await seedTasks(
      t,
      orgId,
      data.tasks.map(({ lead, ...task }) => ({ ...task, leadId: lead === null ? null : leadOf(lead) })),
    );
  }
  if (data.activities.length > 0) {
    await seedActivities(
      t,
      orgId,
      data.activities.map(({ lead, withContact, type, ...a }, i) => ({
        ...a,
        leadId: leadOf(lead),
        type: type === CUSTOM_PLACEHOLDER ? 'custom' : type,
        customActivityTypeId: type === CUSTOM_PLACEHOLDER ? customTypeId : null,
        contactId: withContact && contactIds.length > 0 ? (contactIds[i % contactIds.length] ?? null) : null,
      })),
    );
  }
  return { orgId, customTypeId };
}

/** The rows as stored (so the evaluator sees what PostgreSQL holds, e.g. numeric rounding). */
async function readBack(t: TestContext, orgId: string) {
  const db = t.services.db.system;
  return {
    leads: await db.select().from(leads).where(eq(leads.orgId, orgId)),
    contacts: await db.select().from(contacts).where(eq(contacts.orgId, orgId)),
    opportunities: await db.select().from(opportunities).where(eq(opportunities.orgId, orgId)),
    tasks: await db.select().from(tasks).where(eq(tasks.orgId, orgId)),
    activities: await db.select().from(activities).where(eq(activities.orgId, orgId)),
  };
}

async function sqlMatches(
  t: TestContext,
  query: SmartViewQuery,
  orgId: string,
  candidates?: string[],
): Promise<string[]> {
  const rows = await t.services.db.system
    .select({ id: leads.id })
    .from(leads)
    .where(
      and(eq(leads.orgId, orgId), isNull(leads.deletedAt), compileSmartViewQuery(query, orgId, candidates)),
    );
  return rows.map((r) => r.id).sort();
}

/** The candidates of the query's facts (smart_view_facts), or undefined when no filter is served. */
async function factCandidateIds(t: TestContext, query: SmartViewQuery, orgId: string) {
  return (await readFactCandidates(t.services.db.system, query, orgId, 1000)) ?? undefined;
}

test('compiled SQL and the reference evaluator select the same leads', { timeout: 180_000 }, async ({
  t,
}) => {
  await fc.assert(
    fc.asyncProperty(caseArb, async ([data, rawQueries]) => {
      const { orgId, customTypeId } = await insertData(t, data);
      const stored = await readBack(t, orgId);
      for (const raw of rawQueries) {
        const query = concreteQuery(raw, customTypeId);
        const expected = [...evaluateSmartViewQuery(query, stored)].sort();
        expect(await sqlMatches(t, query, orgId), JSON.stringify(query)).toEqual(expected);
        // Narrowed to the candidates of its facts, the same leads.
        const candidates = await factCandidateIds(t, query, orgId);
        if (candidates !== undefined) {
          expect(await sqlMatches(t, query, orgId, candidates), `facts: ${JSON.stringify(query)}`).toEqual(
            expected,
          );
        }
      }
    }),
    { numRuns: 40 },
  );
});
