// Locks in row-level security: PostgreSQL itself hides and refuses other organizations' rows in a tenant transaction.
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Executor } from '../core/db/client.ts';
import { apiKeys, organizations, users } from '../core/db/schema.ts';
import { newId } from '../core/ids.ts';
import { leads } from '../tools/leads/tables.ts';
import { createTestContext, type TestContext, type TestOrg } from './helpers.ts';

let t: TestContext;
let orgA: TestOrg;
let orgB: TestOrg;
/** A third organization whose tenant transactions run the unfiltered updates and deletes. */
let orgC: TestOrg;
const leadIds: Record<'a' | 'b' | 'c', string[]> = { a: [], b: [], c: [] };
const keyIds: Record<'a' | 'b' | 'c', string[]> = { a: [], b: [], c: [] };

/** Raw query results differ by driver (PGlite, node-postgres) but both carry `rows`. */
async function rows<T extends z.ZodType>(db: Executor, query: ReturnType<typeof sql>, row: T) {
  return z.object({ rows: z.array(row) }).parse(await db.execute(query)).rows;
}

/** The SQLSTATE of a driver error, found through drizzle's wrapper (`cause`). */
function sqlState(err: unknown): string | undefined {
  for (let e: unknown = err; typeof e === 'object' && e !== null; ) {
    if ('code' in e && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
    e = 'cause' in e ? e.cause : undefined;
  }
  return undefined;
}

function messages(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) parts.push(e.message);
  return parts.join(' | ');
}

async function captureError(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected the statement to be refused, but it succeeded');
}

async function seed(org: TestOrg, key: 'a' | 'b' | 'c', leadCount: number): Promise<void> {
  for (let i = 0; i < leadCount; i++) {
    const id = newId();
    await t.services.db.system
      .insert(leads)
      .values({ id, orgId: org.orgId, name: `${key}-lead-${i}`, ownerId: org.ownerId });
    leadIds[key].push(id);
  }
  await t.createUser(org.orgId, 'member');
  keyIds[key].push((await t.createPat(org.orgId, org.ownerId, ['read:leads'])).keyId);
}

beforeAll(async () => {
  t = await createTestContext();
  orgA = await t.createOrg({ name: 'Org A' });
  orgB = await t.createOrg({ name: 'Org B' });
  orgC = await t.createOrg({ name: 'Org C' });
  await seed(orgA, 'a', 2);
  await seed(orgB, 'b', 3);
  await seed(orgC, 'c', 2);
});
afterAll(() => t.close());

describe('row-level security is declared on every tenant table', () => {
  it('enables RLS with at least one policy on organizations and every public table with org_id', async () => {
    const tables = await rows(
      t.services.db.system,
      sql`
        select c.relname as name,
               c.relrowsecurity as rls,
               (select count(*) from pg_policies p
                 where p.schemaname = 'public' and p.tablename = c.relname)::int as policies
          from pg_class c
          join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'public'
           and c.relkind in ('r', 'p')
           and (c.relname = 'organizations' or exists (
                 select 1 from information_schema.columns col
                  where col.table_schema = 'public'
                    and col.table_name = c.relname
                    and col.column_name = 'org_id'))
         order by c.relname`,
      z.object({ name: z.string(), rls: z.boolean(), policies: z.number() }),
    );
    const names = tables.map((r) => r.name);
    expect(names.length).toBeGreaterThan(1);
    expect(names).toEqual(expect.arrayContaining(['organizations', 'users', 'api_keys', 'leads']));
    const unprotected = tables.filter((r) => !r.rls || r.policies < 1).map((r) => r.name);
    expect(unprotected, 'tables with org_id but without RLS enabled and a policy').toEqual([]);
  });

  it('shows a tenant no row of another organization in any org_id table', async () => {
    const tables = await rows(
      t.services.db.system,
      sql`select table_name as name from information_schema.columns
           where table_schema = 'public' and column_name = 'org_id' order by table_name`,
      z.object({ name: z.string() }),
    );
    expect(tables.length).toBeGreaterThan(0);
    const count = z.object({ n: z.number() });
    for (const { name } of tables) {
      const table = sql.identifier(name);
      const leaked = await t.services.db.withTenant(orgA.orgId, (tx) =>
        rows(tx, sql`select count(*)::int as n from ${table} where org_id <> ${orgA.orgId}`, count),
      );
      expect(leaked[0]?.n, `rows of other organizations visible in ${name}`).toBe(0);
    }
  });
});

describe('a tenant transaction without org filters', () => {
  it('returns only the tenant’s leads although other organizations have leads', async () => {
    const all = await t.services.db.system.select({ id: leads.id, orgId: leads.orgId }).from(leads);
    expect(all.filter((r) => r.orgId === orgB.orgId)).toHaveLength(3);

    const seen = await t.services.db.withTenant(orgA.orgId, (tx) => tx.select().from(leads));
    expect(seen.map((r) => r.id).sort()).toEqual([...leadIds.a].sort());
    expect(seen.every((r) => r.orgId === orgA.orgId)).toBe(true);
  });

  it('returns only the tenant’s users and API keys', async () => {
    const allUsers = await t.services.db.system.select({ orgId: users.orgId }).from(users);
    expect(allUsers.some((r) => r.orgId === orgB.orgId)).toBe(true);

    const { seenUsers, seenKeys } = await t.services.db.withTenant(orgA.orgId, async (tx) => ({
      seenUsers: await tx.select().from(users),
      seenKeys: await tx.select().from(apiKeys),
    }));
    // The owner and the member created by seed().
    expect(seenUsers).toHaveLength(2);
    expect(seenUsers.every((r) => r.orgId === orgA.orgId)).toBe(true);
    expect(seenUsers.map((r) => r.id)).toContain(orgA.ownerId);
    expect(seenKeys.map((r) => r.id)).toEqual(keyIds.a);
  });

  it('sees only its own organization record', async () => {
    const seen = await t.services.db.withTenant(orgA.orgId, (tx) => tx.select().from(organizations));
    expect(seen.map((r) => r.id)).toEqual([orgA.orgId]);
  });

  it('cannot find another organization’s lead even by its id', async () => {
    const target = leadIds.b[0]!;
    const seen = await t.services.db.withTenant(orgA.orgId, (tx) =>
      tx.select().from(leads).where(eq(leads.id, target)),
    );
    expect(seen).toEqual([]);
  });
});

describe('writes across organizations are refused by PostgreSQL', () => {
  it('refuses inserting a lead with another organization’s org_id, and writes nothing', async () => {
    const id = newId();
    const err = await captureError(() =>
      t.services.db.withTenant(orgA.orgId, (tx) =>
        tx.insert(leads).values({ id, orgId: orgB.orgId, name: 'smuggled' }),
      ),
    );
    expect(sqlState(err)).toBe('42501');
    expect(messages(err)).toMatch(/row-level security/);
    const written = await t.services.db.system.select().from(leads).where(eq(leads.id, id));
    expect(written).toEqual([]);
  });

  it('refuses inserting a user or an API key into another organization', async () => {
    const userId = newId();
    const userErr = await captureError(() =>
      t.services.db.withTenant(orgA.orgId, (tx) =>
        tx.insert(users).values({
          id: userId,
          orgId: orgB.orgId,
          email: `smuggled-${userId}@example.test`,
          name: 'Smuggled',
          role: 'owner',
        }),
      ),
    );
    expect(sqlState(userErr)).toBe('42501');
    expect(await t.services.db.system.select().from(users).where(eq(users.id, userId))).toEqual([]);

    const keyId = newId();
    const keyErr = await captureError(() =>
      t.services.db.withTenant(orgA.orgId, (tx) =>
        tx.insert(apiKeys).values({
          id: keyId,
          orgId: orgB.orgId,
          userId: orgB.ownerId,
          label: 'smuggled',
          tokenHash: `hash-${keyId}`,
          tokenPrefix: 'pat_0000',
          scopes: ['mcp:write'],
        }),
      ),
    );
    expect(sqlState(keyErr)).toBe('42501');
    expect(await t.services.db.system.select().from(apiKeys).where(eq(apiKeys.id, keyId))).toEqual([]);
  });

  it('refuses moving the tenant’s own lead into another organization', async () => {
    const target = leadIds.a[0]!;
    const err = await captureError(() =>
      t.services.db.withTenant(orgA.orgId, (tx) =>
        tx.update(leads).set({ orgId: orgB.orgId }).where(eq(leads.id, target)),
      ),
    );
    expect(sqlState(err)).toBe('42501');
    const [row] = await t.services.db.system.select().from(leads).where(eq(leads.id, target));
    expect(row?.orgId).toBe(orgA.orgId);
  });
});

describe('unfiltered updates and deletes stay inside the tenant', () => {
  it('updates only the tenant’s rows', async () => {
    const before = await t.services.db.system.select().from(leads).where(inArray(leads.id, leadIds.b));

    const updated = await t.services.db.withTenant(orgC.orgId, (tx) =>
      tx.update(leads).set({ name: 'renamed by C' }).returning({ id: leads.id }),
    );
    expect(updated.map((r) => r.id).sort()).toEqual([...leadIds.c].sort());

    const renamedUsers = await t.services.db.withTenant(orgC.orgId, (tx) =>
      tx.update(users).set({ name: 'renamed by C' }).returning({ orgId: users.orgId }),
    );
    expect(renamedUsers.length).toBeGreaterThan(0);
    expect(renamedUsers.every((r) => r.orgId === orgC.orgId)).toBe(true);

    const after = await t.services.db.system.select().from(leads).where(inArray(leads.id, leadIds.b));
    expect(after).toEqual(before);
    const namesOfB = await t.services.db.system
      .select({ name: users.name })
      .from(users)
      .where(eq(users.orgId, orgB.orgId));
    expect(namesOfB.some((r) => r.name === 'renamed by C')).toBe(false);
  });

  it('deletes only the tenant’s rows', async () => {
    const deleted = await t.services.db.withTenant(orgC.orgId, async (tx) => ({
      leads: await tx.delete(leads).returning({ id: leads.id }),
      keys: await tx.delete(apiKeys).returning({ id: apiKeys.id }),
    }));
    expect(deleted.leads.map((r) => r.id).sort()).toEqual([...leadIds.c].sort());
    expect(deleted.keys.map((r) => r.id)).toEqual(keyIds.c);

    const survivors = await t.services.db.system
      .select({ id: leads.id })
      .from(leads)
      .where(inArray(leads.id, [...leadIds.a, ...leadIds.b]));
    expect(survivors).toHaveLength(leadIds.a.length + leadIds.b.length);
    const keysLeft = await t.services.db.system
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(inArray(apiKeys.id, [...keyIds.a, ...keyIds.b]));
    expect(keysLeft).toHaveLength(2);
  });
});

describe('the crm_app role without a tenant', () => {
  it('sees nothing when app.org_id is not set', async () => {
    const seen = await t.services.db.transaction(async (tx) => {
      await tx.execute(sql`set local role crm_app`);
      return {
        leads: await tx.select().from(leads),
        users: await tx.select().from(users),
        apiKeys: await tx.select().from(apiKeys),
        organizations: await tx.select().from(organizations),
      };
    });
    expect(seen).toEqual({ leads: [], users: [], apiKeys: [], organizations: [] });
    // The same connection pool still sees everything as the system role afterwards (SET LOCAL ended).
    const all = await t.services.db.system.select({ id: leads.id }).from(leads);
    expect(all.length).toBeGreaterThanOrEqual(leadIds.a.length + leadIds.b.length);
  });

  it('cannot insert a row without a tenant', async () => {
    const id = newId();
    const err = await captureError(() =>
      t.services.db.transaction(async (tx) => {
        await tx.execute(sql`set local role crm_app`);
        await tx.insert(leads).values({ id, orgId: orgA.orgId, name: 'no tenant' });
      }),
    );
    expect(sqlState(err)).toBe('42501');
    expect(await t.services.db.system.select().from(leads).where(eq(leads.id, id))).toEqual([]);
  });
});
