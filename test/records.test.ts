// Locks in the record helper's pure rules (core/records.ts): sort parsing against an allow-list, PATCH merging, change diffs and event payloads.
import { desc, type SQL, sql } from 'drizzle-orm';
import { PgDialect, pgTable, text } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { AppError } from '../core/errors.ts';
import {
  auditValues,
  canonicalJson,
  changePayload,
  defineRecordTable,
  diffFields,
  type FieldNames,
  mergeCustom,
  mergePatch,
  newRecordStamp,
  ownerTransferPayload,
  parseSort,
  prefixMatch,
  type SortColumn,
  sameValue,
  sortOrder,
} from '../core/records.ts';
import { leads } from '../tools/leads/tables.ts';

const dialect = new PgDialect();
const orderSql = (order: readonly SQL[]) => dialect.sqlToQuery(sql.join([...order], sql`, `)).sql;

const SORT_COLUMNS = {
  created_at: leads.createdAt,
  name: sql`lower(${leads.name})`,
  converted_at: { column: leads.convertedAt, nullsLast: true },
} satisfies Record<string, SortColumn>;
const NEWEST_FIRST = [desc(leads.createdAt), desc(leads.id)];

describe('sortOrder', () => {
  it('falls back to the given order when no sort is asked for', () => {
    expect(orderSql(sortOrder(undefined, SORT_COLUMNS, leads.id, NEWEST_FIRST))).toBe(
      '"leads"."created_at" desc, "leads"."id" desc',
    );
  });

  it('orders by the allow-listed column, the id breaking ties in the same direction', () => {
    expect(orderSql(sortOrder('created_at', SORT_COLUMNS, leads.id, NEWEST_FIRST))).toBe(
      '"leads"."created_at" asc, "leads"."id" asc',
    );
    expect(orderSql(sortOrder('-name', SORT_COLUMNS, leads.id, NEWEST_FIRST))).toBe(
      'lower("leads"."name") desc, "leads"."id" desc',
    );
  });

  it('puts rows without a value last in both directions for a nullsLast field', () => {
    expect(orderSql(sortOrder('converted_at', SORT_COLUMNS, leads.id, []))).toBe(
      '"leads"."converted_at" asc nulls last, "leads"."id" asc',
    );
    expect(orderSql(sortOrder('-converted_at', SORT_COLUMNS, leads.id, []))).toBe(
      '"leads"."converted_at" desc nulls last, "leads"."id" desc',
    );
  });

  it('refuses a field outside the allow-list with a 400 on sort', () => {
    const attempt = () => sortOrder('-status', SORT_COLUMNS, leads.id, NEWEST_FIRST);
    expect(attempt).toThrow(AppError);
    expect(attempt).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });

  it('parses a leading minus as descending', () => {
    expect(parseSort('-updated_at')).toEqual({ field: 'updated_at', descending: true });
    expect(parseSort('name')).toEqual({ field: 'name', descending: false });
  });
});

describe('prefixMatch', () => {
  it('matches word prefixes over the search vector and ranks by them; nothing searchable is null', () => {
    const match = prefixMatch(leads.search, 'Acme, Inc!');
    expect(match).not.toBeNull();
    const where = match && dialect.sqlToQuery(match.where);
    expect(where?.sql).toBe(`"leads"."search" @@ to_tsquery('simple', $1)`);
    expect(where?.params).toEqual(['acme:* & inc:*']);
    expect(prefixMatch(leads.search, '-- !!')).toBeNull();
  });
});

describe('mergePatch and mergeCustom', () => {
  const base = { name: 'Acme', description: 'old' as string | null, tags: ['a'] };

  it('replaces sent fields, keeps absent ones and clears those sent as null', () => {
    expect(mergePatch(base, { name: 'Acme Corp', description: null, tags: undefined })).toEqual({
      name: 'Acme Corp',
      description: null,
      tags: ['a'],
    });
    expect(base.name).toBe('Acme');
  });

  it('merges additional properties, a key sent as null removing it', () => {
    expect(mergeCustom({ tier: 'gold', region: 'EU' }, { tier: null, seats: 12 })).toEqual({
      region: 'EU',
      seats: 12,
    });
  });
});

describe('diffFields', () => {
  type State = { name: string; ownerId: string | null; emails: { email: string; type: string }[] };
  const FIELDS: FieldNames<keyof State> = [
    ['name', 'name'],
    ['ownerId', 'owner_id'],
    ['emails', 'emails'],
  ];
  const before: State = { name: 'Jane', ownerId: 'u1', emails: [{ email: 'j@x.example', type: 'work' }] };

  it('lists changed fields by public name in declaration order, with their previous values', () => {
    const change = diffFields(before, { ...before, emails: [], ownerId: null, name: 'Janet' }, FIELDS);
    expect(change.changed).toEqual(['name', 'owner_id', 'emails']);
    expect(change.previous).toEqual({ name: 'Jane', owner_id: 'u1', emails: before.emails });
  });

  it('compares objects as canonical JSON, so key order read back from jsonb is no change', () => {
    const reordered = { ...before, emails: [{ type: 'work', email: 'j@x.example' }] };
    expect(diffFields(before, reordered, FIELDS).changed).toEqual([]);
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
    expect(sameValue(['a', 'b'], ['a', 'b'])).toBe(true);
    expect(sameValue(['a', 'b'], ['b', 'a'])).toBe(false);
    expect(sameValue(null, 'x')).toBe(false);
  });

  it('follows the fields with the additional properties, before-keys first; a new key was null', () => {
    const change = diffFields(before, before, FIELDS, [
      { tier: 'gold', region: 'EU', size: { n: 1 } },
      { region: 'US', size: { n: 1 }, seats: 3 },
    ]);
    expect(change.changed).toEqual(['tier', 'region', 'seats']);
    expect(change.previous).toEqual({ tier: 'gold', region: 'EU', seats: null });
  });
});

describe('event payloads and stamps', () => {
  it('adds changed_fields and previous_values to the record', () => {
    const record = { _id: 'r1', name: 'Acme' };
    expect(changePayload(record, { changed: ['name'], previous: { name: 'Old' } })).toEqual({
      _id: 'r1',
      name: 'Acme',
      changed_fields: ['name'],
      previous_values: { name: 'Old' },
    });
    expect(ownerTransferPayload(record, 'u1')).toMatchObject({
      changed_fields: ['owner_id'],
      previous_values: { owner_id: 'u1' },
    });
  });

  it('stamps a new record with a fresh id, the organization, the creator and the time', () => {
    const now = new Date('2025-01-02T03:04:05.000Z');
    const stamp = newRecordStamp({ auth: { orgId: 'o1', userId: 'u1' }, now });
    expect(stamp).toMatchObject({ orgId: 'o1', createdBy: 'u1', createdAt: now, updatedAt: now });
    expect(stamp.id).toMatch(/^[0-9a-f]{24}$/);
    expect(auditValues(stamp)).toEqual({
      created_by: 'u1',
      created_at: '2025-01-02T03:04:05.000Z',
      updated_at: '2025-01-02T03:04:05.000Z',
    });
  });
});

describe('defineRecordTable', () => {
  const unusable = () => {
    throw new Error('not called');
  };

  it('takes the trash columns from the table, and says so when a table lacks them', () => {
    const records = defineRecordTable({ label: 'Lead', table: leads, select: unusable, update: unusable });
    expect(records.columns).toMatchObject({ id: leads.id, orgId: leads.orgId, createdAt: leads.createdAt });
    const notes = pgTable('notes', { id: text('id').primaryKey() });
    expect(() =>
      defineRecordTable({ label: 'Note', table: notes, select: unusable, update: unusable }),
    ).toThrow(/Note: the table has no id, orgId, deletedAt or deletedBy column/);
  });

  it('builds an owned-record entry only for a table with an owner', () => {
    const owned = defineRecordTable({
      label: 'Lead',
      table: leads,
      select: unusable,
      update: unusable,
      ownerId: leads.ownerId,
    });
    expect(owned.ownedRecords({ name: 'leads', announce: async () => {} })).toMatchObject({
      name: 'leads',
      ownerId: leads.ownerId,
      updatedAt: leads.updatedAt,
    });
    const unowned = defineRecordTable({ label: 'Lead', table: leads, select: unusable, update: unusable });
    expect(() => unowned.ownedRecords({ name: 'leads', announce: async () => {} })).toThrow(/owner rule/);
  });
});
