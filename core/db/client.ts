// Opens the database: PGlite in-process (the embedded default, persisted under DATA_DIR) or a
// PostgreSQL server through `pg` when DATABASE_URL is set. Both are driven through the same drizzle
// types, so nothing above this module knows which one it talks to.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { type ExtractTablesWithRelations, sql } from 'drizzle-orm';
import {
  drizzle as drizzlePg,
  NodePgDatabase,
  NodePgSession,
  NodePgTransaction,
} from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite, PgliteDatabase, PgliteSession } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { dialect } from './dialect.ts';
import { lockDataDir } from './lock.ts';
import * as schema from './schema.ts';
import { countOf } from './sql.ts';

export type Schema = typeof schema;
/** A database handle or an open transaction: what every data function takes. */
export type Executor = PgDatabase<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

/**
 * `saturated`: every pooled connection is in use and requests are queued for one, so new work
 * waits (and may time out). PGlite has one in-process connection and never reports it.
 */
export type PoolStatus = 'ok' | 'saturated';

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
  poolStatus(): PoolStatus;
  close(): Promise<void>;
}

/**
 * Time limits of every pooled PostgreSQL connection, in milliseconds (0: none). A statement that
 * runs longer, or waits longer for a row or table lock, fails (SQLSTATE 57014 / 55P03); waiting
 * longer for a free connection fails in the pool. core/errors.ts turns each into a retriable 503.
 */
export interface DatabaseTimeouts {
  statementMs: number;
  lockMs: number;
  acquireMs: number;
}

export interface OpenDatabaseOptions {
  /** A postgres:// URL; undefined selects PGlite. */
  url?: string | undefined;
  /**
   * A direct connection to the same database when `url` goes through a transaction pooler
   * (PgBouncer): the migrations run on it, holding their session lock, and it stores the time limits
   * where pooling keeps them (`storeRoleTimeouts`). Undefined, or equal to `url`: `url` is direct.
   */
  directUrl?: string | undefined;
  /** PGlite's directory; undefined keeps PGlite in memory. */
  dataDir?: string | undefined;
  poolMax?: number;
  /** PostgreSQL only; undefined leaves the server's defaults (no limits). */
  timeouts?: DatabaseTimeouts | undefined;
  /**
   * In-memory PGlite only: start from this image of a database (buildPgliteImage) instead of an
   * empty cluster, which skips initdb and the migrations already in it (the test suite's fixture).
   */
  image?: Blob | undefined;
  /**
   * In-memory PGlite only: use this open, migrated PGlite instead of starting one, and hand it back
   * with `release` instead of closing it. Starting PGlite from an image costs about a second of CPU;
   * the test fixtures lend one per worker to file after file, emptied in between (test/fixtures/pglite-pool.ts).
   */
  lease?: PgliteLease | undefined;
}

/** A PGlite lent by its owner (openDatabase's `lease`): closing the database gives it back. */
export interface PgliteLease {
  client: PGlite;
  release(): Promise<void>;
}

const DEFAULT_POOL_MAX = 10;

const PGLITE_MAINTENANCE_MS = 5 * 60_000;

const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * Sets the tenant for the current transaction in one round trip: `set_config(..., true)` is SET
 * LOCAL, so both the organization and the crm_app role end with the transaction.
 */
async function enterTenant(tx: Executor, orgId: string): Promise<void> {
  await tx.execute(sql`select set_config('app.org_id', ${orgId}, true), set_config('role', 'crm_app', true)`);
}

/**
 * `begin` and the tenant settings as one simple-protocol statement list: one round trip where
 * drizzle's transaction and enterTenant take two. Ids are generated ([0-9a-f]), and the literal is
 * escaped by the driver all the same.
 */
function beginTenantSql(client: pg.PoolClient, orgId: string): string {
  const org = client.escapeLiteral(orgId);
  return `begin; select set_config('app.org_id', ${org}, true), set_config('role', 'crm_app', true)`;
}

/**
 * withTenant on a PostgreSQL pool: a tenant transaction in three round trips for a read (begin with
 * the tenant settings, the tool's statements, commit) instead of drizzle's begin, settings, ...,
 * commit. The handler gets a drizzle transaction on the same pooled connection, so nested
 * transactions (savepoints) and every query builder work as before. A connection whose rollback
 * failed is destroyed rather than handed back to the pool in an unknown state.
 */
function pooledTenantTransaction(pool: pg.Pool): Database['withTenant'] {
  // The transaction gets no relational schema (no `tx.query.*` is used), so opening one builds nothing.
  return async (orgId, fn) => {
    const client = await pool.connect();
    let destroy = false;
    try {
      await client.query(beginTenantSql(client, orgId));
      const tx: Executor = new NodePgTransaction(
        dialect,
        new NodePgSession(client, dialect, undefined),
        undefined,
      );
      const result = await fn(tx);
      await client.query('commit');
      return result;
    } catch (err) {
      await client.query('rollback').catch(() => {
        destroy = true;
      });
      throw err;
    } finally {
      client.release(destroy);
    }
  };
}

function makeDatabase(
  kind: Database['kind'],
  system: Executor,
  runMigrations: () => Promise<void>,
  close: () => Promise<void>,
  poolStatus: () => PoolStatus,
  tenantTransaction?: Database['withTenant'],
): Database {
  return {
    kind,
    system,
    poolStatus,
    withTenant:
      tenantTransaction ??
      ((orgId, fn) =>
        system.transaction(async (tx) => {
          await enterTenant(tx, orgId);
          return fn(tx);
        })),
    transaction: (fn) => system.transaction((tx) => fn(tx)),
    migrate: runMigrations,
    ping: async () => {
      await system.execute(sql`select 1`);
    },
    close,
  };
}

/**
 * The pool's connection settings. On a direct connection the time limits are session settings sent
 * when each connection opens, so they bound every statement on it: tenant and system transactions,
 * authentication lookups and the workers' queries alike, with no extra round trip per transaction.
 * Through a transaction pooler they are not sent: PgBouncer refuses unknown startup parameters, and
 * a session setting would stay on whichever server connection it reached. `storeRoleTimeouts`
 * carries them instead.
 */
function poolConfig(
  url: string,
  max: number,
  timeouts: DatabaseTimeouts | undefined,
  pooled: boolean,
): pg.PoolConfig {
  if (!timeouts) return { connectionString: url, max };
  return {
    connectionString: url,
    max,
    ...(pooled ? {} : { statement_timeout: timeouts.statementMs, lock_timeout: timeouts.lockMs }),
    connectionTimeoutMillis: timeouts.acquireMs,
  };
}

function poolStatusOf(pool: pg.Pool, max: number): PoolStatus {
  return pool.totalCount >= max && pool.idleCount === 0 && pool.waitingCount > 0 ? 'saturated' : 'ok';
}

/**
 * Behind a transaction pooler, the time limits become the connecting role's defaults in this
 * database, which PostgreSQL applies when each server connection logs in: every connection the
 * pooler opens from then on has them, whichever client it serves, and a transaction's SET LOCAL
 * of the role (withTenant) leaves them in place. Connections the pooler opened before keep their
 * old values until it recycles them (docs/scaling.md "PgBouncer").
 */
async function storeRoleTimeouts(client: pg.Client, timeouts: DatabaseTimeouts): Promise<void> {
  // Whole milliseconds from the validated configuration: safe to write into the statement.
  const statementMs = Math.trunc(timeouts.statementMs);
  const lockMs = Math.trunc(timeouts.lockMs);
  await client.query(`do $$ begin
    execute format('alter role current_user in database %I set statement_timeout = ${statementMs}', current_database());
    execute format('alter role current_user in database %I set lock_timeout = ${lockMs}', current_database());
  end $$`);
}

/**
 * Runs the migrations on a connection of their own, outside the pool and never through a pooler,
 * so they are exempt from its time limits (a schema change may rightly wait for locks and run
 * long), holding the advisory lock on that same session: several API nodes may start at once, one
 * migrates, the others wait for it. A session lock needs a session: through PgBouncer's
 * transaction pooling the unlock could reach another server connection and the lock stay held.
 */
async function migratePostgres(directUrl: string, roleTimeouts: DatabaseTimeouts | undefined): Promise<void> {
  const client = new pg.Client({ connectionString: directUrl });
  await client.connect();
  try {
    // Limits stored on the role (below, or by an operator) apply to this session too: a migration
    // is exempt from them.
    await client.query('set statement_timeout = 0; set lock_timeout = 0');
    await client.query(`select pg_advisory_lock(hashtext('crm_migrations'))`);
    await migratePg(drizzlePg(client, { schema }), { migrationsFolder });
    if (roleTimeouts) await storeRoleTimeouts(client, roleTimeouts);
  } finally {
    await client.query(`select pg_advisory_unlock(hashtext('crm_migrations'))`).catch(() => {});
    await client.end();
  }
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url) {
    const url = options.url;
    const directUrl = options.directUrl ?? url;
    const pooled = directUrl !== url;
    const max = options.poolMax ?? DEFAULT_POOL_MAX;
    const pool = new pg.Pool(poolConfig(url, max, options.timeouts, pooled));
    // An idle client that errors (server restart) must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    const db: Executor = new NodePgDatabase(dialect, new NodePgSession(pool, dialect, undefined), undefined);
    return makeDatabase(
      'postgres',
      db,
      () => migratePostgres(directUrl, pooled ? options.timeouts : undefined),
      () => pool.end(),
      () => poolStatusOf(pool, max),
      pooledTenantTransaction(pool),
    );
  }
  let client: PGlite;
  let release = () => {};
  if (options.dataDir) {
    // One process per embedded database (core/db/lock.ts): a second one stops here, before opening.
    const lock = lockDataDir(options.dataDir);
    release = () => lock.release();
    const dir = join(options.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    try {
      client = new PGlite(dir);
    } catch (err) {
      release();
      throw err;
    }
  } else if (options.lease) {
    client = options.lease.client;
  } else {
    client = new PGlite(options.image ? { loadDataDir: options.image } : {});
  }
  const db = new PgliteDatabase<Schema>(dialect, new PgliteSession(client, dialect, undefined), undefined);
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
      const before = options.image || options.lease ? await countMigrations(db) : undefined;
      await migratePglite(db, { migrationsFolder });
      // An image (buildPgliteImage) holds the statistics of the analyze it was built with: gather
      // them again only when a migration changed the schema since (a test file's start, otherwise).
      if (before === undefined || (await countMigrations(db)) !== before) await db.execute(sql`analyze`);
    },
    async () => {
      clearInterval(maintenance);
      if (options.lease) return options.lease.release();
      try {
        await client.close();
      } finally {
        release();
      }
    },
    // One in-process connection whose queries queue inside PGlite: there is no pool to exhaust.
    () => 'ok',
  );
}

/**
 * A migrated, empty PGlite database as an image (an uncompressed tarball of its data directory),
 * for openDatabase's `image`: opening one costs a fraction of initdb plus every migration, which
 * is most of the time a test file spends getting a database.
 */
export async function buildPgliteImage(): Promise<Blob> {
  const client = new PGlite();
  try {
    const db = drizzlePglite(client, { schema });
    await migratePglite(db, { migrationsFolder });
    await db.execute(sql`analyze`);
    return await client.dumpDataDir('none');
  } finally {
    await client.close();
  }
}

/** How many migrations drizzle has recorded as applied in this database. */
async function countMigrations(db: Executor): Promise<number> {
  return countOf(await db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`));
}
