// Locks in the document kit's one counter table (tools/documents/numbering.ts): invoices and
// estimates number from their own kind's row of document_counters, independently and per
// organization; and migration 0019 carries each organization's last number over from the two
// counter tables it replaces, so numbering continues without a gap or a duplicate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect } from 'vitest';
import { z } from 'zod';
import { rowsOf } from '../../core/db/sql.ts';
import { createEstimate } from '../fixtures/estimates.ts';
import { fileTest } from '../fixtures/file-test.ts';
import { createInvoice, finalizeInvoice } from '../fixtures/invoices.ts';
import { migrationsBefore } from '../support/migrations-before.ts';

const MIGRATIONS = fileURLToPath(new URL('../../core/db/migrations', import.meta.url));
const counterRow = z.object({ org_id: z.string(), kind: z.string(), last_number: z.number() });

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

describe('numbering by kind', () => {
  test('gives invoices and estimates their own sequences, per organization', async ({
    t,
    org: a,
    other: b,
  }) => {
    expect((await createEstimate(t, a)).number).toBe('EST-000001');
    const invoice = await createInvoice(t, a);
    expect((await finalizeInvoice(t, a, invoice._id)).number).toBe('INV-000001');
    expect((await createEstimate(t, a)).number).toBe('EST-000002');
    expect((await createEstimate(t, b)).number).toBe('EST-000001');
    const counters = counterRow
      .array()
      .parse(
        rowsOf(
          await t.services.db.system.execute(
            sql`select org_id, kind, last_number from document_counters where org_id = ${a.orgId} order by kind`,
          ),
        ),
      );
    expect(counters.map((c) => [c.kind, c.last_number])).toEqual([
      ['estimate', 2],
      ['invoice', 1],
    ]);
  });
});

describe('migration 0019', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-0019-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('carries the invoice and estimate counters over into document_counters and drops the old tables', async () => {
    // The migrations up to 0018: the same folder with the journal cut before 0019.
    const before = migrationsBefore(dir, (tag) => tag.startsWith('0019_'));

    const client = new PGlite();
    try {
      const db = drizzle(client);
      await migrate(db, { migrationsFolder: before });
      await db.execute(
        sql`insert into organizations (id, name, plan) values ('org_a', 'A', 'pro'), ('org_b', 'B', 'pro')`,
      );
      await db.execute(
        sql`insert into invoice_counters (org_id, last_number) values ('org_a', 41), ('org_b', 7)`,
      );
      await db.execute(sql`insert into estimate_counters (org_id, last_number) values ('org_a', 12)`);
      await migrate(db, { migrationsFolder: MIGRATIONS });
      const rows = counterRow
        .array()
        .parse(
          rowsOf(
            await db.execute(
              sql`select org_id, kind, last_number from document_counters order by org_id, kind`,
            ),
          ),
        );
      expect(rows).toEqual([
        { org_id: 'org_a', kind: 'estimate', last_number: 12 },
        { org_id: 'org_a', kind: 'invoice', last_number: 41 },
        { org_id: 'org_b', kind: 'invoice', last_number: 7 },
      ]);
      const old = rowsOf(
        await db.execute(
          sql`select table_name from information_schema.tables where table_name in ('invoice_counters', 'estimate_counters')`,
        ),
      );
      expect(old).toEqual([]);
    } finally {
      await client.close();
    }
    // Two full runs of the migrations on a fresh embedded database: slow on a loaded machine.
  }, 120_000);
});
