// Locks in that the product's SQL renderer (core/db/dialect.ts) gives exactly drizzle's text,
// parameters and typings for every kind of chunk the product writes, renders those itself (without
// drizzle's renderer), and leaves every other kind to drizzle; and that the check the test suite
// runs on every statement (verifyRendering) would catch a difference.
import { and, arrayContains, asc, desc, eq, inArray, isNull, or, Param, type SQL, sql } from 'drizzle-orm';
import { alias, PgDialect, QueryBuilder } from 'drizzle-orm/pg-core';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { FastPgDialect, verifyRendering } from '../core/db/dialect.ts';
import { outboxEvents } from '../core/db/schema.ts';
import { leads } from '../tools/leads/tables.ts';
import { projects } from '../tools/projects/tables.ts';

const drizzle = new PgDialect();
const fast = new FastPgDialect();

/** Renders with the product's dialect, reporting whether drizzle's renderer was needed. */
function renderFast(statement: SQL): { query: ReturnType<PgDialect['sqlToQuery']>; fellBack: boolean } {
  const spy = vi.spyOn(PgDialect.prototype, 'sqlToQuery');
  try {
    const query = fast.sqlToQuery(statement);
    return { query, fellBack: spy.mock.calls.length > 0 };
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => {
  // The suite renders with the check on (test/setup/verify-sql.ts); these tests switch it off.
  verifyRendering(true);
});

const at = new Date('2026-11-28T10:15:00.000Z');

/** Statements made only of the chunks the renderer handles itself. */
const OWN_CHUNKS: Record<string, () => SQL> = {
  'a list page with a total': () =>
    sql`select ${leads.id}, (select count(*) from ${leads} where ${and(eq(leads.orgId, 'org_1'), isNull(leads.deletedAt))}) from ${leads} where ${and(
      eq(leads.orgId, 'org_1'),
      isNull(leads.deletedAt),
    )} order by ${sql.join([desc(leads.createdAt), desc(leads.id)], sql`, `)} limit ${25} offset ${50}`,
  'ors, ins and an array containment': () =>
    sql`where ${or(
      inArray(leads.status, ['potential', 'customer']),
      arrayContains(leads.tags, ['vip']),
      eq(leads.ownerId, 'usr_1'),
    )}`,
  'values of every type a column encodes': () =>
    sql`${eq(leads.createdAt, at)} ${eq(leads.tags, ['a', 'b"c'])} ${eq(leads.custom, { tier: 'gold', n: [1, 2] })} ${eq(projects.budgetHours, '12.50')} ${eq(projects.startsOn, '2026-12-01')}`,
  'plain values bound as they are': () =>
    sql`select ${1}, ${'text'}, ${null}, ${true}, ${at}, ${{ a: 1 }}, ${Buffer.from('ab')}, ${10n}`,
  'a value list and an empty one': () => sql`${leads.id} in ${['a', 'b', 'c']} or ${leads.id} in ${[]}`,
  'identifiers, raw text and nested SQL': () =>
    sql`select ${sql.identifier('we"ird')} from ${sql.raw('pg_class')} where ${sql`${sql`${1}`} = ${sql`1`}`}`,
  'an explicit parameter with an encoder': () => sql`${new Param(at, leads.createdAt)} and ${sql.param('x')}`,
  'a null column value': () => eq(leads.ownerId, null as unknown as string),
  'an empty statement': () => sql``,
  'a query builder statement': () =>
    sql`${and(eq(outboxEvents.orgId, 'org_2'), asc(outboxEvents.id), sql`${outboxEvents.relayedAt} < ${at}`)}`,
};

/** Statements holding a chunk the renderer leaves to drizzle. */
const DRIZZLE_CHUNKS: Record<string, () => SQL> = {
  'inlined parameters': () => sql`select ${'a'}, ${1}`.inlineParams(),
  'a placeholder': () => sql`select ${sql.placeholder('id')}`,
  'a placeholder parameter': () => eq(leads.id, sql.placeholder('id')),
  'an aliased table and its column': () => {
    const other = alias(leads, 'other');
    return sql`select ${other.id} from ${other}`;
  },
  'an aliased field': () => sql`select ${sql`1`.as('one')}`,
  'a query builder': () => sql`select exists (${new QueryBuilder().select({ id: leads.id }).from(leads)})`,
  'a subquery': () => sql`select * from ${new QueryBuilder().select({ id: leads.id }).from(leads).as('sq')}`,
  'an object with its own SQL': () => sql`select ${{ getSQL: () => sql`2` }}`,
};

describe('the product renderer', () => {
  test.each(Object.entries(OWN_CHUNKS))('renders %s itself, exactly as drizzle does', (_, build) => {
    verifyRendering(false);
    const { query, fellBack } = renderFast(build());
    expect(fellBack).toBe(false);
    expect(query).toStrictEqual(drizzle.sqlToQuery(build()));
  });

  test.each(Object.entries(DRIZZLE_CHUNKS))('leaves %s to drizzle, with its answer', (_, build) => {
    verifyRendering(false);
    const { query, fellBack } = renderFast(build());
    expect(fellBack).toBe(true);
    expect(query).toStrictEqual(drizzle.sqlToQuery(build()));
  });

  test('numbers parameters across nested statements as one sequence', () => {
    const { query } = renderFast(sql`${sql`${1}, ${sql`${2}`}`}, ${3}, ${eq(leads.id, 'x')}`);
    expect(query.sql).toBe('$1, $2, $3, "leads"."id" = $4');
    expect(query.params).toStrictEqual([1, 2, 3, 'x']);
  });

  test('the check catches a rendering that differs from drizzle', () => {
    verifyRendering(true);
    const statement = sql`select ${leads.id} where ${eq(leads.orgId, 'org_1')}`;
    expect(() => fast.sqlToQuery(statement)).not.toThrow();
    // A dialect whose typing of a column changes after its first answer, which the renderer keeps:
    // its rendering then differs from drizzle's, and the check must see it.
    // (drizzle calls it unbound, so the count lives outside the instance.)
    let calls = 0;
    class Broken extends FastPgDialect {
      override prepareTyping(): 'json' | 'none' {
        calls += 1;
        return calls === 1 ? 'json' : 'none';
      }
    }
    expect(() => new Broken().sqlToQuery(statement)).toThrow(/where drizzle renders/);
  });
});
