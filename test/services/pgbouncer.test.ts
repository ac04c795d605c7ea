// The database behind PgBouncer in transaction pooling with ONE server connection, so every client
// of the pool runs on the same PostgreSQL session one transaction after another: nothing a tenant
// transaction sets (the organization, the crm_app role) survives it, the next tenant sees only its
// own rows, and the time limits (which cannot travel as startup parameters through the pooler) are
// the role's defaults on that session. The migrations go to the direct URL (core/db/client.ts).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, type Executor, openDatabase } from '../../core/db/client.ts';
import { rowsOf } from '../../core/db/sql.ts';
import { newId } from '../../core/ids.ts';
import { createOrganizationWithOwner } from '../../core/organizations.ts';
import { leads } from '../../tools/leads/tables.ts';
import { createScratchDatabase, onPostgres, TEST_DATABASE_URL } from '../helpers.ts';
import { hasPgbouncer, startPgbouncer, type TestPgbouncer } from '../support/pgbouncer.ts';

let bouncer: TestPgbouncer | undefined;
let drop: (() => Promise<void>) | undefined;
let db: Database;
const orgs: { id: string; lead: string }[] = [];

/** The one row of a query on the pool, as an object. */
async function one(executor: Executor, query: ReturnType<typeof sql>): Promise<Record<string, unknown>> {
  const [row] = rowsOf(await executor.execute(query));
  if (typeof row !== 'object' || row === null) throw new Error('no row');
  return row as Record<string, unknown>;
}

/** Which server connection answers, as which role, for which organization. */
async function session(executor: Executor): Promise<{ pid: unknown; role: unknown; org_id: unknown }> {
  const row = await one(
    executor,
    sql`select pg_backend_pid() as pid, current_user as role,
      coalesce(current_setting('app.org_id', true), '') as org_id`,
  );
  return { pid: row.pid, role: row.role, org_id: row.org_id };
}

const leadIds = async (tx: Executor) => (await tx.select({ id: leads.id }).from(leads)).map((r) => r.id);

describe.skipIf(!onPostgres || !hasPgbouncer())(
  'behind PgBouncer (transaction pooling)',
  { timeout: 120_000 },
  () => {
    beforeAll(async () => {
      if (!TEST_DATABASE_URL) throw new Error('the services suite runs on PostgreSQL');
      const scratch = await createScratchDatabase(TEST_DATABASE_URL);
      drop = scratch.drop;
      bouncer = await startPgbouncer(TEST_DATABASE_URL, 1);
      db = await openDatabase({
        url: bouncer.urlOf(scratch.url),
        directUrl: scratch.url,
        poolMax: 4,
        timeouts: { statementMs: 12_345, lockMs: 2_345, acquireMs: 10_000 },
      });
      await db.migrate();
      for (const name of ['Tenant A', 'Tenant B']) {
        const { organization, owner } = await db.transaction((tx) =>
          createOrganizationWithOwner(tx, {
            name,
            plan: 'free',
            owner: { name: 'Owner', email: `${newId()}@example.test`, passwordHash: 'unused' },
          }),
        );
        const lead = newId();
        await db.system
          .insert(leads)
          .values({ id: lead, orgId: organization.id, name: `${name} lead`, createdBy: owner.id });
        orgs.push({ id: organization.id, lead });
      }
    });

    afterAll(async () => {
      await db?.close();
      await bouncer?.stop();
      await drop?.();
    });

    it('every client of the pool shares the one server connection', async () => {
      const pids = await Promise.all(
        Array.from({ length: 4 }, () => db.transaction(async (tx) => (await session(tx)).pid)),
      );
      expect(new Set(pids).size).toBe(1);
    });

    it("tenant A's transaction leaves nothing to tenant B's or to the statement after it", async () => {
      const [a, b] = orgs;
      if (!a || !b) throw new Error('two tenants expected');
      const inA = await db.withTenant(a.id, async (tx) => ({
        ...(await session(tx)),
        leads: await leadIds(tx),
      }));
      expect(inA).toMatchObject({ role: 'crm_app', org_id: a.id, leads: [a.lead] });
      const inB = await db.withTenant(b.id, async (tx) => ({
        ...(await session(tx)),
        leads: await leadIds(tx),
      }));
      expect(inB).toMatchObject({ pid: inA.pid, role: 'crm_app', org_id: b.id, leads: [b.lead] });
      // Outside a transaction, on the same server connection: the login role, no organization.
      const after = await session(db.system);
      expect(after.pid).toBe(inA.pid);
      expect(after.role).not.toBe('crm_app');
      expect(after.org_id).toBe('');
    });

    it('a tenant transaction that fails leaves nothing either', async () => {
      const [a] = orgs;
      if (!a) throw new Error('a tenant expected');
      await expect(
        db.withTenant(a.id, async (tx) => {
          await session(tx);
          throw new Error('the handler failed');
        }),
      ).rejects.toThrow('the handler failed');
      const after = await session(db.system);
      expect(after.role).not.toBe('crm_app');
      expect(after.org_id).toBe('');
      // And with no organization set, the tenant policies show nothing under crm_app.
      const unscoped = await db.transaction(async (tx) => {
        await tx.execute(sql`select set_config('role', 'crm_app', true)`);
        return leadIds(tx);
      });
      expect(unscoped).toEqual([]);
    });

    it('the time limits reach the pooled session as the role defaults', async () => {
      const limits = await one(
        db.system,
        sql`select current_setting('statement_timeout') as statement, current_setting('lock_timeout') as lock`,
      );
      expect(limits).toEqual({ statement: '12345ms', lock: '2345ms' });
      // Inside a tenant transaction too: SET ROLE crm_app keeps the session's values.
      const [a] = orgs;
      if (!a) throw new Error('a tenant expected');
      const inTenant = await db.withTenant(a.id, (tx) =>
        one(tx, sql`select current_setting('lock_timeout') as lock`),
      );
      expect(inTenant).toEqual({ lock: '2345ms' });
    });
  },
);
