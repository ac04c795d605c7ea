// Locks in the shared custom field validator: definition rules (keys, choice options, duplicates) and value checks per type, including user/lead references looked up in the organization.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { users } from '../../core/db/schema.ts';
import {
  customFieldDefSchema,
  customFieldDefsSchema,
  validateCustomValues,
} from '../../tools/custom-objects/fields.ts';
import type { CustomFieldDef } from '../../tools/custom-objects/tables.ts';
import { createLead, fileTest, type TestContext, type TestOrg } from '../fixtures/index.ts';
import { seedLeads } from '../leads/seed.ts';

let liveLead: string;
let trashedLead: string;
let foreignLead: string;
let inactiveUser: string;

const defs: CustomFieldDef[] = [
  { key: 'summary', label: 'Summary', type: 'text', required: true },
  { key: 'score', label: 'Score', type: 'number', required: false },
  { key: 'on', label: 'On', type: 'date', required: false },
  { key: 'billable', label: 'Billable', type: 'boolean', required: false },
  { key: 'outcome', label: 'Outcome', type: 'choice', required: false, options: ['won', 'lost'] },
  { key: 'owner', label: 'Owner', type: 'user', required: false },
  { key: 'related', label: 'Related lead', type: 'lead', required: false },
];

function validate(
  t: TestContext,
  org: TestOrg,
  values: Record<string, unknown>,
  partial = false,
  pathPrefix = 'values',
) {
  return validateCustomValues(t.services.db.system, org.orgId, defs, values, { partial, pathPrefix });
}

const test = fileTest();

test.beforeAll(async ({ t, org, other }) => {
  liveLead = (await createLead(t, org, { name: 'Lead' }))._id;
  // A trashed lead straight in the table: the field rules read the row, not the trash's bookkeeping.
  [trashedLead = ''] = await seedLeads(t, org.orgId, [{ name: 'Lead', deletedAt: new Date() }]);
  foreignLead = (await createLead(t, other, { name: 'Lead' }))._id;
  inactiveUser = (await t.createUser(org.orgId, 'member')).userId;
  await t.services.db.system.update(users).set({ status: 'deactivated' }).where(eq(users.id, inactiveUser));
});

describe('field definitions', () => {
  test('accepts a valid definition and defaults required to false', () => {
    const parsed = customFieldDefSchema.parse({
      key: 'stage_2',
      label: 'Stage',
      type: 'choice',
      options: ['a'],
    });
    expect(parsed.required).toBe(false);
  });

  test('refuses bad keys, long labels, unknown types and misplaced options', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ key: 'Bad', label: 'x', type: 'text' }, 'key'],
      [{ key: '1x', label: 'x', type: 'text' }, 'key'],
      [{ key: 'a'.repeat(65), label: 'x', type: 'text' }, 'key'],
      [{ key: 'ok', label: 'x'.repeat(101), type: 'text' }, 'label'],
      [{ key: 'ok', label: '', type: 'text' }, 'label'],
      [{ key: 'ok', label: 'x', type: 'money' }, 'type'],
      [{ key: 'ok', label: 'x', type: 'choice' }, 'options'],
      [{ key: 'ok', label: 'x', type: 'choice', options: [] }, 'options'],
      [{ key: 'ok', label: 'x', type: 'text', options: ['a'] }, 'options'],
      [
        { key: 'ok', label: 'x', type: 'choice', options: Array.from({ length: 101 }, (_, i) => `o${i}`) },
        'options',
      ],
    ];
    for (const [def, field] of cases) {
      const result = customFieldDefSchema.safeParse(def);
      expect(result.success, JSON.stringify(def)).toBe(false);
      expect(result.error?.issues.map((i) => String(i.path[0]))).toContain(field);
    }
  });

  test('reports a duplicate key at the duplicate index and caps the list at 100', () => {
    const dup = customFieldDefsSchema.safeParse([
      { key: 'a', label: 'A', type: 'text' },
      { key: 'b', label: 'B', type: 'text' },
      { key: 'a', label: 'A again', type: 'number' },
    ]);
    expect(dup.success).toBe(false);
    expect(dup.error?.issues[0]?.path).toEqual([2, 'key']);
    const many = Array.from({ length: 101 }, (_, i) => ({ key: `k${i}`, label: 'L', type: 'text' }));
    expect(customFieldDefsSchema.safeParse(many).success).toBe(false);
  });
});

describe('validateCustomValues', () => {
  test('accepts valid values and fills absent optional fields with null', async ({ t, org }) => {
    const { values, errors } = await validate(t, org, {
      summary: 'Went well',
      score: 4.5,
      on: '2024-02-29',
      billable: true,
      outcome: 'won',
      owner: org.ownerId,
      related: liveLead,
    });
    expect(errors).toEqual([]);
    expect(values).toEqual({
      summary: 'Went well',
      score: 4.5,
      on: '2024-02-29',
      billable: true,
      outcome: 'won',
      owner: org.ownerId,
      related: liveLead,
    });
    const sparse = await validate(t, org, { summary: 'x' });
    expect(sparse.errors).toEqual([]);
    expect(sparse.values).toMatchObject({ summary: 'x', score: null, owner: null, related: null });
  });

  test('reports every problem with its field path', async ({ t, org }) => {
    const { errors } = await validate(t, org, {
      score: 'high',
      on: '2023-02-29',
      billable: 'yes',
      outcome: 'maybe',
      owner: inactiveUser,
      related: trashedLead,
      extra: 1,
    });
    const byField = Object.fromEntries(errors.map((e) => [e.field, e.code]));
    expect(byField).toEqual({
      'values.summary': 'required',
      'values.score': 'invalid_type',
      'values.on': 'invalid_date',
      'values.billable': 'invalid_type',
      'values.outcome': 'invalid_value',
      'values.owner': 'invalid_reference',
      'values.related': 'invalid_reference',
      'values.extra': 'unknown_field',
    });
  });

  test('refuses text over 10000 characters or with NUL, ids that are not ids, and foreign leads', async ({
    t,
    org,
  }) => {
    const { errors } = await validate(t, org, {
      summary: `a${'\u0000'}b`,
      owner: 'nope',
      related: foreignLead,
    });
    expect(errors.map((e) => e.field).sort()).toEqual(['values.owner', 'values.related', 'values.summary']);
    const long = await validate(t, org, { summary: 'x'.repeat(10_001) });
    expect(long.errors[0]).toMatchObject({ field: 'values.summary', code: 'too_big' });
  });

  test('null clears an optional field and is an error for a required one; partial skips absent required keys', async ({
    t,
    org,
  }) => {
    const partial = await validate(t, org, { score: null }, true);
    expect(partial.errors).toEqual([]);
    expect(partial.values).toEqual({ score: null });
    const cleared = await validate(t, org, { summary: null }, true);
    expect(cleared.errors[0]).toMatchObject({ field: 'values.summary', code: 'required' });
  });

  test('uses the bare key when the prefix is empty', async ({ t, org }) => {
    const { errors } = await validate(t, org, { summary: 'x', score: Number.POSITIVE_INFINITY }, false, '');
    expect(errors[0]?.field).toBe('score');
  });
});
