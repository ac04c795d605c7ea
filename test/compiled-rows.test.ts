// Locks in that a compiled row select (core/db/compiled-rows.ts, the record helper's reads) gives
// exactly the rows drizzle's select of the same columns gives: same keys in the same order, every
// value decoded alike (Dates, arrays, JSON, numbers), over every trashable record table; that a
// compiled insert writes and returns what drizzle's insert does, defaults included; and that a
// selection it cannot compile (an expression, another table's column) is refused, not misread.
import { asc, eq, getTableColumns, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { describe, expect } from 'vitest';
import { compileRowInsert, compileRowSelect } from '../core/db/compiled-rows.ts';
import { outboxEvents } from '../core/db/schema.ts';
import { newId } from '../core/ids.ts';
import { TRASH_TYPES } from '../tools/index.ts';
import { invoices } from '../tools/invoices/tables.ts';
import { leads } from '../tools/leads/tables.ts';
import {
  createContact,
  createInvoice,
  createLead,
  createOpportunity,
  createTask,
  fileTest,
  logActivity,
} from './fixtures/index.ts';

const test = fileTest();

describe('compiled row selects', () => {
  test('read every trashable table exactly as the query builder does', async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Row Select Co', tags: ['a', 'b'], tier: 'gold', n: 3 });
    await createContact(t, org, {
      lead_id: lead._id,
      emails: [{ email: 'ann@example.test', type: 'office' }],
    });
    await createOpportunity(t, org, { lead_id: lead._id, value: 1250, confidence: 40 });
    await createTask(t, org, { lead_id: lead._id, due_at: '2026-12-01T09:30:00.000Z' });
    await logActivity(t, org, { lead_id: lead._id });
    await createInvoice(t, org, { lead_id: lead._id });

    const db = t.services.db.system;
    const typesWithRows: string[] = [];
    // Invoices are not trashable (they are voided) but carry money and dates: read them too.
    const tables = [
      ...TRASH_TYPES.map((type) => ({
        type: type.type,
        table: type.table,
        orgId: type.columns.orgId,
        id: type.columns.id,
      })),
      { type: 'invoice', table: invoices, orgId: invoices.orgId, id: invoices.id },
    ];
    for (const type of tables) {
      const fields = getTableColumns(type.table);
      const select = compileRowSelect<Record<string, unknown>>(type.table, fields);
      expect(select, `${type.type}: its own columns compile`).toBeDefined();
      if (!select) continue;
      const orgId = type.orgId;
      const id: PgColumn = type.id;
      const expected = await db.select(fields).from(type.table).where(eq(orgId, org.orgId)).orderBy(asc(id));
      const actual = await select.rows(db, sql`where ${eq(orgId, org.orgId)} order by ${asc(id)}`);
      expect(actual, type.type).toStrictEqual(expected);
      for (const [i, row] of actual.entries())
        expect(Object.keys(row)).toEqual(Object.keys(expected[i] ?? {}));
      if (expected.length > 0) typesWithRows.push(type.type);
    }
    // The comparison is not vacuous: the records made above were read back.
    expect(typesWithRows).toEqual(
      expect.arrayContaining(['lead', 'contact', 'opportunity', 'task', 'activity', 'invoice']),
    );

    const withTotal = compileRowSelect<Record<string, unknown>>(leads, getTableColumns(leads));
    const page = await withTotal?.rowsWith(
      db,
      sql`select count(*) from ${leads}`,
      sql`where ${eq(leads.id, lead._id)}`,
    );
    expect(page?.rows.map((r) => r.id)).toEqual([lead._id]);
    expect(Number(page?.extra)).toBeGreaterThanOrEqual(1);
  });

  test('inserts a row as the query builder does: given values, defaults, returning', async ({ t, org }) => {
    const db = t.services.db.system;
    const fields = getTableColumns(leads);
    const insert = compileRowInsert<typeof leads, Record<string, unknown>>(leads, fields);
    const at = new Date('2026-11-27T10:11:12.345Z');
    const full = {
      id: '',
      orgId: org.orgId,
      name: 'Compiled, "quoted" ½',
      description: null,
      url: 'https://example.test/a?b=c',
      status: 'client',
      ownerId: org.ownerId,
      tags: ['x', 'y,z', 'with "quote"'],
      custom: { nested: { list: [1, 'two', null] }, n: 1.5 },
      convertedAt: at,
      createdBy: org.ownerId,
      createdAt: at,
      updatedAt: at,
    };
    // Omitted columns: deleted_at/deleted_by, and on the second tags, custom and the times (database defaults).
    const minimal = { id: '', orgId: org.orgId, name: 'Minimal', status: 'new', createdBy: org.ownerId };
    for (const values of [full, minimal]) {
      const [compiled] = await insert(db, { ...values, id: newId() });
      const [built] = await db
        .insert(leads)
        .values({ ...values, id: newId() })
        .returning(fields);
      if (!compiled || !built) throw new Error('an insert returned no row');
      expect(compiled.id).toMatch(/^[0-9a-f]{24}$/);
      expect(compiled.id).not.toBe(built.id);
      const withoutIds = (row: Record<string, unknown>) => {
        const { id: _id, search: _search, createdAt, updatedAt, ...rest } = row;
        return {
          ...rest,
          createdAt: values === full ? createdAt : 'now',
          updatedAt: values === full ? updatedAt : 'now',
        };
      };
      expect(withoutIds(compiled)).toStrictEqual(withoutIds(built));
      expect(Object.keys(compiled)).toEqual(Object.keys(built));
      const [stored] = await db
        .select(fields)
        .from(leads)
        .where(eq(leads.id, String(compiled.id)));
      expect(stored).toStrictEqual(compiled);
    }

    const event = compileRowInsert(outboxEvents);
    const id = newId();
    expect(
      await event(db, { id, orgId: org.orgId, event: 'lead.created', data: { a: [1, { b: 'c' }] } }),
    ).toEqual([]);
    const [row] = await db.select().from(outboxEvents).where(eq(outboxEvents.id, id));
    expect(row?.data).toEqual({ a: [1, { b: 'c' }] });
    expect(row?.event).toBe('lead.created');
  });

  test('refuses a selection that is not the table’s own columns', () => {
    expect(compileRowSelect(leads, { id: leads.id, n: sql<number>`1` })).toBeUndefined();
    const [other] = TRASH_TYPES.filter((type) => type.table !== leads);
    if (!other) throw new Error('expected another trashable table');
    expect(compileRowSelect(leads, { id: leads.id, other: other.columns.id })).toBeUndefined();
  });
});
