// Locks in that a compiled row select (core/db/row-select.ts, the record helper's reads) gives
// exactly the rows drizzle's select of the same columns gives: same keys in the same order, every
// value decoded alike (Dates, arrays, JSON, numbers), over every trashable record table; and that a
// selection it cannot compile (an expression, another table's column) is refused, not misread.
import { asc, eq, getTableColumns, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { describe, expect } from 'vitest';
import { compileRowSelect } from '../core/db/row-select.ts';
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

  test('refuses a selection that is not the table’s own columns', () => {
    expect(compileRowSelect(leads, { id: leads.id, n: sql<number>`1` })).toBeUndefined();
    const [other] = TRASH_TYPES.filter((type) => type.table !== leads);
    if (!other) throw new Error('expected another trashable table');
    expect(compileRowSelect(leads, { id: leads.id, other: other.columns.id })).toBeUndefined();
  });
});
