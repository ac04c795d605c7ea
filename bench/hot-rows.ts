// `npm run bench:hot-rows`: concurrent lead creators in ONE organization on PostgreSQL
// (issue 24 item 4, docs/decisions.md "Exact counts without a hot row"). It seeds one organization,
// starts a real server in-process and has autocannon POST /api/v1/leads on HOT_ROWS_CONNECTIONS
// connections (default 50) for BENCH_SECONDS, while a separate connection samples pg_stat_activity
// every SAMPLE_MS: how many of the database's backends wait on a lock (wait_event_type 'Lock').
// Afterwards the list's total must equal a count of the live leads. Prints one JSON line; appends
// nothing (the figures go into bench/results.md by hand, alternated with the commit before).
//
// Environment: BENCH_SECONDS (default 15), HOT_ROWS_CONNECTIONS (default 50), HOT_ROWS_POOL (the
// server's DB_POOL_MAX, default 50: one pooled connection per writer, so the writers meet in the
// database rather than in the pool's queue), BENCH_DATABASE_URL.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { z } from 'zod';
import { createServices } from '../app/services.ts';
import { loadConfig } from '../core/config.ts';
import { rowsOf } from '../core/db/sql.ts';
import { createLogger } from '../core/logger.ts';
import type { Services } from '../core/services.ts';
import { createApp } from '../http/app.ts';
import { createDatabase } from '../test/support/postgres-admin.ts';
import { gitCommit } from './environment.ts';
import { runLoad } from './measure.ts';
import { seedOrganization } from './seed.ts';
import { listenOnLoopback } from './server-process.ts';

const env = z
  .object({
    BENCH_SECONDS: z.coerce.number().positive().default(15),
    HOT_ROWS_CONNECTIONS: z.coerce.number().int().positive().default(50),
    HOT_ROWS_POOL: z.coerce.number().int().positive().default(50),
    BENCH_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
  })
  .parse(process.env);

const SAMPLE_MS = 50;
const WARMUP_SECONDS = 3;
const sampleRow = z.object({ lock: z.coerce.number(), active: z.coerce.number() });

function log(message: string): void {
  process.stderr.write(`[bench:hot-rows] ${message}\n`);
}

/** Samples the database's other backends until stopped: lock waiters and active ones per sample. */
function sampleLocks(url: string) {
  const client = new pg.Client({ connectionString: url });
  const samples: Array<{ lock: number; active: number }> = [];
  let running = true;
  const done = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query(`
        select count(*) filter (where wait_event_type = 'Lock') as lock,
               count(*) filter (where state = 'active') as active
          from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`);
      samples.push(sampleRow.parse(rows[0]));
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
    await client.end();
  })();
  return {
    async stop() {
      running = false;
      await done;
      return samples;
    },
  };
}

async function liveLeads(services: Services, orgId: string): Promise<number> {
  const [row] = rowsOf(
    await services.db.system.execute(
      sql`select count(*)::int as n from leads where org_id = ${orgId} and deleted_at is null`,
    ),
  );
  return z.object({ n: z.number() }).parse(row).n;
}

async function main(): Promise<void> {
  const db = await createDatabase(env.BENCH_DATABASE_URL, 'crm_bench_hot_rows');
  let services: Services | undefined;
  let server: ServerType | undefined;
  try {
    const config = loadConfig({
      LOG_LEVEL: 'warn',
      JWT_SECRET: randomBytes(32).toString('hex'),
      DATABASE_URL: db.url,
      DB_POOL_MAX: String(env.HOT_ROWS_POOL),
    });
    services = await createServices(config, { withoutRateLimits: true, logger: createLogger('warn') });
    const org = await seedOrganization(services, 1000);
    server = createAdaptorServer({ fetch: createApp(services).fetch });
    const base = await listenOnLoopback(server);
    const spec = {
      url: `${base}/api/v1/leads`,
      method: 'POST' as const,
      headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Hot row lead', status: 'new', tags: ['bench'] }),
      connections: env.HOT_ROWS_CONNECTIONS,
    };
    await runLoad({ ...spec, seconds: WARMUP_SECONDS });
    const sampler = sampleLocks(db.url);
    const started = performance.now();
    const result = await runLoad({ ...spec, seconds: env.BENCH_SECONDS });
    const elapsed = (performance.now() - started) / 1000;
    const samples = await sampler.stop();
    if (result.non2xx > 0 || result.errors > 0) log(`errors: ${JSON.stringify(result)}`);
    // Requests autocannon left in flight when it stopped still commit: let them.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const listed = z
      .object({ total: z.number() })
      .parse(await (await fetch(`${base}/api/v1/leads?limit=1`, { headers: spec.headers })).json()).total;
    const counted = await liveLeads(services, org.orgId);
    if (listed !== counted) throw new Error(`list total ${listed} but ${counted} live leads`);
    const withLock = samples.filter((s) => s.lock > 0).length;
    const mean = (pick: (s: { lock: number; active: number }) => number) =>
      samples.reduce((sum, s) => sum + pick(s), 0) / Math.max(1, samples.length);
    process.stdout.write(
      `${JSON.stringify({
        commit: gitCommit(),
        load: loadavg().map((l) => l.toFixed(1)),
        connections: env.HOT_ROWS_CONNECTIONS,
        pool: env.HOT_ROWS_POOL,
        seconds: elapsed.toFixed(1),
        requestsPerSecond: Number(result.requestsPerSecond.toFixed(0)),
        p50: result.p50,
        p99: result.p99,
        non2xx: result.non2xx,
        samples: samples.length,
        samplesWithLockWait: Number((withLock / Math.max(1, samples.length)).toFixed(3)),
        meanLockWaiters: Number(mean((s) => s.lock).toFixed(2)),
        meanActive: Number(mean((s) => s.active).toFixed(2)),
        totalChecked: `${listed} = ${counted}`,
      })}\n`,
    );
  } finally {
    if (server) {
      const s = server;
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
    await services?.close();
    await db.drop();
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
