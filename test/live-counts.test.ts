// Locks in the live-count ledger (core/live-counts.ts, migration 0031): totals stay exact over many
// parallel writer transactions in one organization (one rolled back), over trash, restore and purge,
// and while the fold runs alongside the writers; on PostgreSQL a writer never waits for another
// organization-mate's open transaction; a tenant reads and writes only its own ledger rows; and the
// migration carries the old lead_counts totals over.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect } from 'vitest';
import { z } from 'zod';
import type { Executor } from '../core/db/client.ts';
import { liveCounts } from '../core/db/schema.ts';
import { rowsOf } from '../core/db/sql.ts';
import { newId } from '../core/ids.ts';
import { foldLiveCounts, readLiveCount } from '../core/live-counts.ts';
import { purgeTrash } from '../core/trash.ts';
import { TRASH_TYPES } from '../tools/index.ts';
import { countLiveLeads } from '../tools/leads/store.ts';
import { leads } from '../tools/leads/tables.ts';
import {
  createLead,
  fileTest,
  onPostgres,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from './fixtures/index.ts';
import { migrationsBefore } from './support/migrations-before.ts';

const MIGRATIONS = fileURLToPath(new URL('../core/db/migrations', import.meta.url));

const test = fileTest({ options: { withoutRateLimits: true } });

const WRITERS = 20;
const LEADS_PER_WRITER = 5;

/** The organization's live leads counted row by row: what the ledger must always agree with. */
async function countedLeads(t: TestContext, orgId: string): Promise<number> {
  const [row] = await t.services.db.system
    .select({ n: count() })
    .from(leads)
    .where(and(eq(leads.orgId, orgId), isNull(leads.deletedAt)));
  return row?.n ?? 0;
}

/** The unfiltered total of GET /leads, as a client reads it. */
async function listedTotal(t: TestContext, org: TestOrg): Promise<number> {
  return (
    await readOutput(await t.request('GET', '/api/v1/leads?limit=1', { token: org.token }), TOOL.list_leads)
  ).total;
}

/** The ledger rows of the organization's leads (how many deltas are waiting to be folded). */
async function ledgerRows(t: TestContext, orgId: string): Promise<number> {
  const [row] = await t.services.db.system
    .select({ n: count() })
    .from(liveCounts)
    .where(and(eq(liveCounts.orgId, orgId), eq(liveCounts.kind, 'leads')));
  return row?.n ?? 0;
}

/** Inserts leads in one statement of its own tenant transaction (as a request does). */
function insertLeads(db: Executor, orgId: string, n: number): Promise<unknown> {
  return db
    .insert(leads)
    .values(Array.from({ length: n }, (_, i) => ({ id: newId(), orgId, name: `Writer lead ${i}` })));
}

/** WRITERS tenant transactions at once, each inserting LEADS_PER_WRITER leads in two statements; the one at `rollBack` throws. */
async function parallelWriters(t: TestContext, org: TestOrg, rollBack: number): Promise<void> {
  const outcomes = await Promise.allSettled(
    Array.from({ length: WRITERS }, (_, w) =>
      t.services.db.withTenant(org.orgId, async (tx) => {
        await insertLeads(tx, org.orgId, 1);
        await insertLeads(tx, org.orgId, LEADS_PER_WRITER - 1);
        if (w === rollBack) throw new Error('rolled back on purpose');
      }),
    ),
  );
  expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
}

describe('the live-count ledger', () => {
  test('stays exact over parallel writer transactions in one organization, one of them rolled back', async ({
    t,
  }) => {
    const org = await t.createOrg({ name: 'Parallel writers' });
    await createLead(t, org);
    await parallelWriters(t, org, 7);
    const expected = 1 + (WRITERS - 1) * LEADS_PER_WRITER;
    expect(await countedLeads(t, org.orgId)).toBe(expected);
    expect(await listedTotal(t, org)).toBe(expected);
    // Each committed statement appended its own delta; none updated a shared row.
    expect(await ledgerRows(t, org.orgId)).toBe(1 + (WRITERS - 1) * 2);
  });

  test('follows trash, restore and purge', async ({ t }) => {
    const org = await t.createOrg({ name: 'Trash moves' });
    const ids = [];
    for (const name of ['One', 'Two', 'Three']) ids.push((await createLead(t, org, { name }))._id);
    const expectTotal = async (n: number) => {
      expect(await listedTotal(t, org)).toBe(n);
      expect(await countedLeads(t, org.orgId)).toBe(n);
    };
    await expectTotal(3);
    await t.request('DELETE', `/api/v1/leads/${ids[0]}`, { token: org.token });
    await t.request('DELETE', `/api/v1/leads/${ids[1]}`, { token: org.token });
    await expectTotal(1);
    await t.request('POST', `/api/v1/trash/${ids[1]}/restore`, { token: org.token });
    await expectTotal(2);
    // Purging deletes trashed rows for good, which were no longer counted: the total stays.
    const purged = await purgeTrash(t.services.db.system, TRASH_TYPES, new Date(Date.now() + 60_000), 1000);
    expect(purged.lead).toBeGreaterThanOrEqual(1);
    expect(
      await t.services.db.system
        .select()
        .from(leads)
        .where(eq(leads.id, ids[0] ?? '')),
    ).toEqual([]);
    await expectTotal(2);
  });

  test('loses no delta when the fold runs alongside the writers, and folds to one row', async ({ t }) => {
    const org = await t.createOrg({ name: 'Fold under load' });
    await parallelWriters(t, org, 0);
    const before = await ledgerRows(t, org.orgId);
    expect(before).toBeGreaterThan(1);
    // Two folds race the second wave of writers and each other.
    const folds = [foldLiveCounts(t.services.db.system, org.orgId), foldLiveCounts(t.services.db.system)];
    await Promise.all([parallelWriters(t, org, 3), ...folds]);
    const expected = 2 * (WRITERS - 1) * LEADS_PER_WRITER;
    expect(await countedLeads(t, org.orgId)).toBe(expected);
    expect(await countLiveLeads(t.services.db.system, org.orgId)).toBe(expected);
    await foldLiveCounts(t.services.db.system);
    expect(await ledgerRows(t, org.orgId)).toBe(1);
    expect(await listedTotal(t, org)).toBe(expected);
  });

  test('folds a total of zero away', async ({ t }) => {
    const org = await t.createOrg({ name: 'Back to zero' });
    const lead = await createLead(t, org);
    await t.request('DELETE', `/api/v1/leads/${lead._id}`, { token: org.token });
    expect(await ledgerRows(t, org.orgId)).toBe(2);
    expect(await foldLiveCounts(t.services.db.system, org.orgId)).toBe(2);
    expect(await ledgerRows(t, org.orgId)).toBe(0);
    expect(await listedTotal(t, org)).toBe(0);
  });

  test('shows and takes a tenant only its own rows', async ({ t, org, other }) => {
    await createLead(t, org);
    await createLead(t, other);
    const seen = await t.services.db.withTenant(org.orgId, (tx) => readLiveCount(tx, other.orgId, 'leads'));
    expect(seen).toBe(0);
    expect(await countLiveLeads(t.services.db.system, other.orgId)).toBeGreaterThan(0);
    const forged = t.services.db.withTenant(org.orgId, (tx) =>
      tx.insert(liveCounts).values({ orgId: other.orgId, kind: 'leads', key: '', delta: 1000 }),
    );
    await expect(forged).rejects.toThrow();
    expect(await countLiveLeads(t.services.db.system, other.orgId)).toBe(await countedLeads(t, other.orgId));
  });
});

describe.skipIf(!onPostgres)('no hot row', () => {
  test('a writer commits while another writer of the same organization holds its transaction open', async ({
    t,
  }) => {
    const org = await t.createOrg({ name: 'No hot row' });
    const before = await countedLeads(t, org.orgId);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted = () => {};
    const firstInserted = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const first = t.services.db.withTenant(org.orgId, async (tx) => {
      await insertLeads(tx, org.orgId, 1);
      inserted();
      await held;
    });
    await firstInserted;
    // With one counter row per organization this waited for the first writer's commit (and timed
    // out after the lock timeout); with the ledger it commits at once.
    await t.services.db.withTenant(org.orgId, async (tx) => {
      await tx.execute(sql`set local lock_timeout = '2s'`);
      await insertLeads(tx, org.orgId, 1);
    });
    expect(await countLiveLeads(t.services.db.system, org.orgId)).toBe(before + 1);
    release();
    await first;
    expect(await countLiveLeads(t.services.db.system, org.orgId)).toBe(before + 2);
  });
});

describe('migration 0031', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-0031-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('carries each organization’s lead_counts total over, counts invoices by status, and drops the counter', async () => {
    const before = migrationsBefore(dir, (tag) => tag.endsWith('_live_counts'));

    const client = new PGlite();
    try {
      const db = drizzle(client);
      await migrate(db, { migrationsFolder: before });
      await db.execute(
        sql`insert into organizations (id, name, plan) values ('org_a', 'A', 'pro'), ('org_b', 'B', 'pro')`,
      );
      await db.execute(sql`insert into leads (id, org_id, name)
        select 'a' || g, 'org_a', 'Lead' from generate_series(1, 5) g
        union all select 'b' || g, 'org_b', 'Lead' from generate_series(1, 2) g`);
      await db.execute(sql`update leads set deleted_at = now() where id = 'a1'`);
      await db.execute(sql`insert into invoices (id, org_id, lead_id, status, currency, line_items,
          subtotal_minor, tax_total_minor, total_minor)
        select id, org_id, lead_id, status, 'USD', '[]'::jsonb, 0, 0, 0 from (values
          ('i1', 'org_a', 'a2', 'draft'), ('i2', 'org_a', 'a2', 'open'),
          ('i3', 'org_a', 'a3', 'open'), ('i4', 'org_b', 'b1', 'paid')) v(id, org_id, lead_id, status)`);
      await migrate(db, { migrationsFolder: MIGRATIONS });

      const ledger = z
        .array(z.object({ org_id: z.string(), kind: z.string(), key: z.string(), n: z.coerce.number() }))
        .parse(
          rowsOf(
            await db.execute(sql`select org_id, kind, key, sum(delta) as n from live_counts
              group by org_id, kind, key order by org_id, kind, key`),
          ),
        );
      expect(ledger).toEqual([
        { org_id: 'org_a', kind: 'invoices', key: 'draft', n: 1 },
        { org_id: 'org_a', kind: 'invoices', key: 'open', n: 2 },
        { org_id: 'org_a', kind: 'leads', key: '', n: 4 },
        { org_id: 'org_b', kind: 'invoices', key: 'paid', n: 1 },
        { org_id: 'org_b', kind: 'leads', key: '', n: 2 },
      ]);
      const tables = rowsOf(await db.execute(sql`select to_regclass('lead_counts') as t`));
      expect(tables).toEqual([{ t: null }]);
      // The new triggers count from here on.
      await db.execute(sql`update invoices set status = 'paid' where id = 'i2'`);
      await db.execute(sql`delete from leads where id = 'b2'`);
      const after = rowsOf(
        await db.execute(sql`select org_id, kind, key, sum(delta)::int as n from live_counts
          where (kind = 'invoices' and key = 'paid') or (kind = 'leads' and org_id = 'org_b')
          group by org_id, kind, key order by org_id, kind, key`),
      );
      expect(after).toEqual([
        { org_id: 'org_a', kind: 'invoices', key: 'paid', n: 1 },
        { org_id: 'org_b', kind: 'invoices', key: 'paid', n: 1 },
        { org_id: 'org_b', kind: 'leads', key: '', n: 1 },
      ]);
    } finally {
      await client.close();
    }
    // Two full runs of the migrations on a fresh embedded database: slow on a loaded machine.
  }, 120_000);
});
