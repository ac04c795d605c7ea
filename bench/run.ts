// `npm run bench`: the request path against its floor. For each backend (the embedded default,
// PostgreSQL, and PostgreSQL with Redis when one answers) it seeds an organization with 10,000 leads,
// starts the product black-box with `npm start` (request limits off: RATE_LIMITS=off) and, on
// PostgreSQL, the hand-written floor of bench/floor.ts on the same database. Then, in rounds that
// alternate the scenarios (so a slow minute of a shared machine hits them all alike), autocannon at
// 50 connections loads: (f1) the floor's page of 25 leads, (b) GET /api/v1/leads?limit=25, (c) the
// same listing through MCP tools/call, (f2) the floor's lead insert and (d) POST /api/v1/leads.
// The floor runs in this process, which must have the Node options `npm start` gives the product
// (package.json "bench" passes them): neither side gets a runtime setting the other lacks.
// Each scenario is reported as the median of its rounds and as a ratio to its anchor (measure.ts
// RATIO_TARGETS). Before any load the floor's page must be byte-identical to the product's.
// During the inserts, pg_stat_activity is sampled for backends waiting on a lock (hot rows).
// Results are appended to bench/results.md and written to bench/results/<timestamp>.json.
//
// Environment: BENCH_SECONDS (per scenario and round, default 10), BENCH_ROUNDS (default 3),
// BENCH_CONNECTIONS (default 50), BENCH_LEADS (default 10000), BENCH_BACKENDS (comma list of
// embedded,postgres,postgres-redis), BENCH_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL, BENCH_APPEND=0 (print only).

import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { z } from 'zod';
import { createServices } from '../app/services.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { createDatabase } from '../test/support/postgres-admin.ts';
import { gitCommit, machine } from './environment.ts';
import { type Floor, startFloor } from './floor.ts';
import {
  type BackendReport,
  evaluateTargets,
  type LoadResult,
  type LoadSpec,
  markdownTable,
  medianResult,
  problemsOf,
  runLoad,
  SCENARIO_LABELS,
  SCENARIOS,
  type Scenario,
} from './measure.ts';
import { type SeededOrg, seedOrganization } from './seed.ts';
import { machineCpuMs, type ServerProcess, startNodeOptions, startServer } from './server-process.ts';

const env = z
  .object({
    BENCH_SECONDS: z.coerce.number().positive().default(10),
    BENCH_ROUNDS: z.coerce.number().int().positive().default(3),
    BENCH_CONNECTIONS: z.coerce.number().int().positive().default(50),
    BENCH_LEADS: z.coerce.number().int().positive().default(10_000),
    BENCH_BACKENDS: z.string().default('embedded,postgres,postgres-redis'),
    BENCH_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
    BENCH_REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
    BENCH_APPEND: z.enum(['0', '1']).default('1'),
  })
  .parse(process.env);

const WARMUP_SECONDS = Math.min(3, env.BENCH_SECONDS);
/** The product's default pool (DB_POOL_MAX); the floor gets the same number of connections. */
const POOL_MAX = 10;
const benchDir = fileURLToPath(new URL('.', import.meta.url));
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};
const MCP_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'list_leads', arguments: { limit: 25 } },
});
const CREATE_BODY = JSON.stringify({ name: 'Benchmark lead', status: 'new', tags: ['bench'] });

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** The JSON-RPC message of an MCP answer, whether it came as JSON or as one SSE event. */
function rpcMessage(contentType: string | null, text: string): unknown {
  if (contentType?.includes('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice('data:'.length).trim())
      .join('');
    return JSON.parse(data);
  }
  return JSON.parse(text);
}

const listBody = z.object({ leads: z.array(z.unknown()), total: z.number() });
const mcpAnswer = z.object({
  result: z.object({ isError: z.boolean().optional(), structuredContent: listBody }),
});

/** A created lead's answer with what differs between any two creates (id, instants) blanked. */
function comparableCreate(text: string): string {
  return text.replace(/"(_id|created_at|updated_at)":"[^"]*"/g, '"$1":"…"');
}

/**
 * One request of each kind, checked by hand, before any load: a benchmark of errors measures
 * nothing, and a floor that does less than the product measures nothing either. The floor's page
 * must be byte-identical to the product's, and its create answer identical but for id and instants.
 */
async function verify(specs: Partial<Record<Scenario, LoadSpec>>, leadCount: number): Promise<void> {
  const send = async (spec: LoadSpec | undefined) => {
    if (!spec) throw new Error('missing scenario');
    const res = await fetch(spec.url, { method: spec.method, headers: spec.headers, body: spec.body });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const list = await send(specs.list);
  const listed = listBody.parse(JSON.parse(list.text));
  if (list.status !== 200 || listed.leads.length !== 25 || listed.total !== leadCount) {
    throw new Error(`listing answered ${list.status} with ${listed.leads.length} of ${listed.total} leads`);
  }
  if (specs.floorList) {
    const floor = await send(specs.floorList);
    if (floor.status !== 200 || floor.text !== list.text) {
      throw new Error(
        `the floor's page differs from the product's:\n${floor.text.slice(0, 600)}\n${list.text.slice(0, 600)}`,
      );
    }
  }
  const mcp = await send(specs.mcp);
  const message = rpcMessage(mcp.type, mcp.text);
  const answer = mcpAnswer.parse(message);
  // The same page as the REST answer, key for key (zod's parse above drops the keys it does not name).
  const raw = (message as { result: { structuredContent: unknown } }).result.structuredContent;
  if (mcp.status !== 200 || answer.result.isError || JSON.stringify(raw) !== list.text) {
    throw new Error(`MCP tools/call answered ${mcp.status}: ${mcp.text.slice(0, 300)}`);
  }
  const created = await send(specs.create);
  if (created.status !== 201) throw new Error(`lead creation answered ${created.status}: ${created.text}`);
  if (specs.floorCreate) {
    const floor = await send(specs.floorCreate);
    if (floor.status !== 201 || comparableCreate(floor.text) !== comparableCreate(created.text)) {
      throw new Error(`the floor's create differs from the product's:\n${floor.text}\n${created.text}`);
    }
  }
}

/** Samples pg_stat_activity: how often some backend of the database waits on a lock (a hot row). */
class LockWaitSampler {
  private samples = 0;
  private withWaits = 0;
  private waiting = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly client: pg.Client) {}

  start(): void {
    this.samples = 0;
    this.withWaits = 0;
    this.waiting = 0;
    this.timer = setInterval(() => void this.sample(), 25);
  }

  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const { rows } = await this.client.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
      );
      const n = rows[0]?.n ?? 0;
      this.samples += 1;
      this.waiting += n;
      if (n > 0) this.withWaits += 1;
    } catch {
      // The database went away at the end of the run: the samples taken so far stand.
    } finally {
      this.busy = false;
    }
  }

  stop(): string {
    clearInterval(this.timer);
    if (this.samples === 0) return 'no samples';
    return `${((100 * this.withWaits) / this.samples).toFixed(1)}% of ${this.samples} samples had a backend waiting on a lock (mean ${(this.waiting / this.samples).toFixed(2)} waiting)`;
  }
}

interface Backend {
  key: string;
  label: string;
  /** Environment for loadConfig and the server, and what to clean up afterwards. */
  prepare(): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>;
}

const BACKENDS: Backend[] = [
  {
    key: 'embedded',
    label: 'Embedded default (PGlite in a temporary DATA_DIR; no floor: one process owns the database)',
    async prepare() {
      const dir = mkdtempSync(join(tmpdir(), 'crm-bench-'));
      return { env: { DATA_DIR: dir }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    key: 'postgres',
    label: 'PostgreSQL (no Redis)',
    async prepare() {
      const db = await createDatabase(env.BENCH_DATABASE_URL, 'crm_bench');
      return { env: { DATABASE_URL: db.url }, cleanup: db.drop };
    },
  },
  {
    key: 'postgres-redis',
    label: 'PostgreSQL + Redis',
    async prepare() {
      const db = await createDatabase(env.BENCH_DATABASE_URL, 'crm_bench');
      return { env: { DATABASE_URL: db.url, REDIS_URL: env.BENCH_REDIS_URL }, cleanup: db.drop };
    },
  },
];

/** Seeds the organization through the product's own services, closed again before the server starts. */
async function seed(serverEnv: Record<string, string>): Promise<SeededOrg> {
  const services = await createServices(loadConfig(serverEnv), {
    withoutRateLimits: true,
    logger: createLogger('warn'),
  });
  try {
    return await seedOrganization(services, env.BENCH_LEADS);
  } finally {
    await services.close();
  }
}

async function benchBackend(backend: Backend): Promise<BackendReport> {
  log(`${backend.label}: starting`);
  const prepared = await backend.prepare();
  const serverEnv = { LOG_LEVEL: 'warn', JWT_SECRET: randomBytes(32).toString('hex'), ...prepared.env };
  let server: ServerProcess | undefined;
  let floor: Floor | undefined;
  let sampler: pg.Client | undefined;
  try {
    const seedStart = Date.now();
    const seeded = await seed(serverEnv);
    log(`seeded ${env.BENCH_LEADS} leads in ${Date.now() - seedStart} ms`);
    server = await startServer({ ...serverEnv, RATE_LIMITS: 'off' });
    const databaseUrl = prepared.env.DATABASE_URL;
    if (databaseUrl) {
      floor = await startFloor(databaseUrl, seeded.token, POOL_MAX);
      sampler = new pg.Client({ connectionString: databaseUrl });
      await sampler.connect();
    }
    const auth = { authorization: `Bearer ${seeded.token}` };
    const common = { connections: env.BENCH_CONNECTIONS, seconds: env.BENCH_SECONDS };
    const listOf = (base: string): LoadSpec => ({
      ...common,
      url: `${base}/api/v1/leads?limit=25`,
      method: 'GET',
      headers: auth,
    });
    const createOf = (base: string): LoadSpec => ({
      ...common,
      url: `${base}/api/v1/leads`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: CREATE_BODY,
    });
    const specs: Partial<Record<Scenario, LoadSpec>> = {
      ...(floor ? { floorList: listOf(floor.url), floorCreate: createOf(floor.url) } : {}),
      list: listOf(server.url),
      mcp: {
        ...common,
        url: `${server.url}/mcp`,
        method: 'POST',
        headers: { ...auth, ...MCP_HEADERS },
        body: MCP_BODY,
      },
      create: createOf(server.url),
    };
    await verify(specs, env.BENCH_LEADS);
    const waits = sampler ? new LockWaitSampler(sampler) : undefined;
    const notes: string[] = [];
    const problems: string[] = [];
    const rounds: Partial<Record<Scenario, LoadResult[]>> = {};
    const running = server;
    const measure = async (scenario: Scenario, spec: LoadSpec, round: number): Promise<void> => {
      const isFloor = scenario === 'floorList' || scenario === 'floorCreate';
      if (round === 0) await runLoad({ ...spec, seconds: WARMUP_SECONDS });
      // The floor runs in this process; the product in its own process group.
      const cpuNow = () =>
        isFloor ? (process.cpuUsage().user + process.cpuUsage().system) / 1000 : running.cpuMs();
      const inserts = scenario === 'create' || scenario === 'floorCreate';
      if (inserts) waits?.start();
      const cpuBefore = cpuNow();
      const machineBefore = machineCpuMs();
      const load = await runLoad(spec);
      const cpuMs = cpuNow() - cpuBefore;
      const machineMs = machineCpuMs() - machineBefore;
      if (inserts && waits) notes.push(`lock waits during ${scenario}, round ${round + 1}: ${waits.stop()}`);
      const result = {
        ...load,
        serverCpuMsPerRequest: cpuMs / Math.max(1, load.total),
        machineCpuMsPerRequest: machineMs / Math.max(1, load.total),
      };
      log(
        `round ${round + 1} ${SCENARIO_LABELS[scenario]}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, server CPU ${result.serverCpuMsPerRequest.toFixed(2)} ms/request, machine ${result.machineCpuMsPerRequest.toFixed(2)}`,
      );
      problems.push(...problemsOf(scenario, result));
      rounds[scenario] = [...(rounds[scenario] ?? []), result];
    };
    for (let round = 0; round < env.BENCH_ROUNDS; round++) {
      for (const scenario of SCENARIOS) {
        const spec = specs[scenario];
        if (spec) await measure(scenario, spec, round);
      }
    }
    if (problems.length > 0) throw new Error(`broken run on ${backend.label}:\n  ${problems.join('\n  ')}`);
    const results: Partial<Record<Scenario, LoadResult>> = {};
    for (const scenario of SCENARIOS) {
      const measured = rounds[scenario];
      if (measured) results[scenario] = medianResult(measured);
    }
    return { backend: backend.label, notes, rounds, results, targets: evaluateTargets(results) };
  } finally {
    await sampler?.end().catch(() => {});
    await floor?.close();
    await server?.stop();
    await prepared.cleanup();
  }
}

async function main(): Promise<void> {
  const missing = startNodeOptions().filter((option) => !process.execArgv.includes(option));
  if (missing.length > 0) {
    throw new Error(
      `the floor runs in this process without ${missing.join(' ')}, which npm start gives the product: run npm run bench`,
    );
  }
  const wanted = new Set(env.BENCH_BACKENDS.split(',').map((s) => s.trim()));
  const startedAt = new Date();
  const header = {
    date: startedAt.toISOString(),
    commit: gitCommit(),
    machine: machine(),
    settings: `${env.BENCH_CONNECTIONS} connections, ${env.BENCH_ROUNDS} rounds of ${env.BENCH_SECONDS} s per scenario (alternating), a ${WARMUP_SECONDS} s warm-up in the first, ${env.BENCH_LEADS} leads`,
  };
  const reports: BackendReport[] = [];
  const skipped: string[] = [];
  for (const backend of BACKENDS) {
    if (!wanted.has(backend.key)) continue;
    if (backend.key === 'postgres-redis' && !(await redisAnswers(env.BENCH_REDIS_URL))) {
      skipped.push(`${backend.label}: no Redis answered at ${env.BENCH_REDIS_URL}`);
      continue;
    }
    reports.push(await benchBackend(backend));
  }

  const section = [
    `## ${header.date}`,
    '',
    `- Commit: ${header.commit}`,
    `- Machine: ${header.machine}`,
    `- Settings: ${header.settings}. The product is \`npm start\` in its own process group with RATE_LIMITS=off (the specification's 300 requests/min per IP would otherwise turn every scenario into a 429 measurement); the floors (bench/floor.ts) run in the bench process on the same database with the same pool size; autocannon runs in a child process. Server CPU is the process group's (product) or the bench process's (floor); the load generator's is its child process's; the machine's is every CPU's non-idle time in /proc/stat (so the floor's includes the bench process's own).`,
    ...skipped.map((s) => `- Skipped ${s}`),
    '',
    ...reports.map(markdownTable),
  ].join('\n');
  if (env.BENCH_APPEND === '1') {
    const resultsMd = join(benchDir, 'results.md');
    if (!existsSync(resultsMd)) {
      writeFileSync(
        resultsMd,
        '# Benchmark results\n\nAppended by `npm run bench` (bench/run.ts), newest last. Figures depend on the machine and on what else it was running; compare runs from one machine only.\n\n',
      );
    }
    appendFileSync(resultsMd, `${section}\n`);
    const jsonDir = join(benchDir, 'results');
    mkdirSync(jsonDir, { recursive: true });
    const file = join(jsonDir, `${header.date.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify({ ...header, skipped, reports }, null, 2)}\n`);
    log(`appended to ${resultsMd}; raw results in ${file}`);
  }
  process.stdout.write(`${section}\n`);
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
