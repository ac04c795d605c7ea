// Opens the database: PGlite in-process (the embedded default, persisted under DATA_DIR) or a
// PostgreSQL server through `pg` when DATABASE_URL is set. Both are driven through the same drizzle
// types, so nothing above this module knows which one it talks to.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { type ExtractTablesWithRelations, sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import * as schema from './schema.ts';

export type Schema = typeof schema;
/** A database handle or an open transaction: what every data function takes. */
export type Executor = PgDatabase<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

export interface Database {
  readonly kind: 'pglite' | 'postgres';
  /** System access as the connecting role (not subject to row-level security): auth, relay, admin. */
  readonly system: Executor;
  /** Runs `fn` in one transaction scoped to `orgId` under the crm_app role, so RLS applies. */
  withTenant<T>(orgId: string, fn: (tx: Executor) => Promise<T>): Promise<T>;
  /** A system transaction (no tenant scope). */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  migrate(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** A postgres:// URL; undefined selects PGlite. */
  url?: string | undefined;
  /** PGlite's directory; undefined keeps PGlite in memory. */
  dataDir?: string | undefined;
  poolMax?: number;
}

const PGLITE_MAINTENANCE_MS = 5 * 60_000;

const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * Sets the tenant for the current transaction in one round trip: `set_config(..., true)` is SET
 * LOCAL, so both the organization and the crm_app role end with the transaction.
 */
async function enterTenant(tx: Executor, orgId: string): Promise<void> {
  await tx.execute(sql`select set_config('app.org_id', ${orgId}, true), set_config('role', 'crm_app', true)`);
}

function makeDatabase(
  kind: Database['kind'],
  system: Executor,
  runMigrations: () => Promise<void>,
  close: () => Promise<void>,
): Database {
  return {
    kind,
    system,
    withTenant: (orgId, fn) =>
      system.transaction(async (tx) => {
        await enterTenant(tx, orgId);
        return fn(tx);
      }),
    transaction: (fn) => system.transaction((tx) => fn(tx)),
    migrate: runMigrations,
    ping: async () => {
      await system.execute(sql`select 1`);
    },
    close,
  };
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolMax ?? 10 });
    // An idle client that errors (server restart) must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    const db = drizzlePg(pool, { schema });
    return makeDatabase(
      'postgres',
      db,
      async () => {
        // Several API nodes may start at once: one migrates, the others wait for it.
        const client = await pool.connect();
        try {
          await client.query(`select pg_advisory_lock(hashtext('crm_migrations'))`);
          await migratePg(db, { migrationsFolder });
        } finally {
          await client.query(`select pg_advisory_unlock(hashtext('crm_migrations'))`).catch(() => {});
          client.release();
        }
      },
      () => pool.end(),
    );
  }
  let client: PGlite;
  if (options.dataDir) {
    const dir = join(options.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    client = new PGlite(dir);
  } else {
    client = new PGlite();
  }
  const db = drizzlePglite(client, { schema });
  // PGlite has no autovacuum: without this nothing would ever gather planner statistics or set the
  // visibility map that lets counts use index-only scans. Small embedded databases vacuum quickly.
  const maintenance = setInterval(() => {
    void db.execute(sql`vacuum analyze`).catch(() => {});
  }, PGLITE_MAINTENANCE_MS);
  maintenance.unref();
  return makeDatabase(
    'pglite',
    db,
    async () => {
      await migratePglite(db, { migrationsFolder });
      await db.execute(sql`analyze`);
    },
    async () => {
      clearInterval(maintenance);
      await client.close();
    },
  );
}
