// `npm run bench`: the first benchmark. For each backend (the embedded default, PostgreSQL, and
// PostgreSQL with Redis when one answers) it starts a real server in-process, seeds an organization
// with 10,000 leads, and loads (a) a bare Hono route, (b) GET /api/v1/leads?limit=25, (c) the same
// listing through MCP tools/call and (d) POST /api/v1/leads with autocannon at 50 connections.
// Results are appended to bench/results.md and written to bench/results/<timestamp>.json.
//
// Environment: BENCH_SECONDS (per scenario, default 10), BENCH_CONNECTIONS (default 50),
// BENCH_LEADS (default 10000), BENCH_BACKENDS (comma list of embedded,postgres,postgres-redis),
// BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL.

import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { createServices } from '../app/services.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import type { Services } from '../core/services.ts';
import { createApp } from '../http/app.ts';
import { createDatabase } from '../test/support/postgres-admin.ts';
import { gitCommit, machine } from './environment.ts';
import {
  type BackendReport,
  evaluateTargets,
  type LoadResult,
  type LoadSpec,
  markdownTable,
  problemsOf,
  runLoad,
  SCENARIO_LABELS,
  type Scenario,
} from './measure.ts';
import { seedOrganization } from './seed.ts';

const env = z
  .object({
    BENCH_SECONDS: z.coerce.number().positive().default(10),
    BENCH_CONNECTIONS: z.coerce.number().int().positive().default(50),
    BENCH_LEADS: z.coerce.number().int().positive().default(10_000),
    BENCH_BACKENDS: z.string().default('embedded,postgres,postgres-redis'),
    BENCH_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
    BENCH_REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  })
  .parse(process.env);

const WARMUP_SECONDS = Math.min(3, env.BENCH_SECONDS);
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

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

function listen(server: ServerType): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('no TCP address'));
        return;
      }
      resolve(`http://127.0.0.1:${address.port}`);
    });
  });
}

function close(server: ServerType): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
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

async function scratchDatabase(adminUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  return createDatabase(adminUrl, 'crm_bench');
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

/** One request of each kind, checked by hand, before any load: a benchmark of errors measures nothing. */
async function verify(specs: Record<Scenario, LoadSpec>, leadCount: number): Promise<void> {
  const send = (spec: LoadSpec) =>
    fetch(spec.url, { method: spec.method, headers: spec.headers, body: spec.body });
  const bare = await send(specs.bare);
  if (bare.status !== 200) throw new Error(`bare route answered ${bare.status}`);
  const list = await send(specs.list);
  const listed = listBody.parse(await list.json());
  if (list.status !== 200 || listed.leads.length !== 25 || listed.total !== leadCount) {
    throw new Error(`listing answered ${list.status} with ${listed.leads.length} of ${listed.total} leads`);
  }
  const mcp = await send(specs.mcp);
  const answer = mcpAnswer.parse(rpcMessage(mcp.headers.get('content-type'), await mcp.text()));
  const content = answer.result.structuredContent;
  if (
    mcp.status !== 200 ||
    answer.result.isError ||
    content.leads.length !== 25 ||
    content.total !== leadCount
  ) {
    throw new Error(`MCP tools/call answered ${mcp.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  }
  const created = await send(specs.create);
  if (created.status !== 201)
    throw new Error(`lead creation answered ${created.status}: ${await created.text()}`);
}

interface Backend {
  key: string;
  label: string;
  /** Environment for loadConfig, and what to clean up afterwards. */
  prepare(): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>;
}

const BACKENDS: Backend[] = [
  {
    key: 'embedded',
    label: 'Embedded default (PGlite in a temporary DATA_DIR)',
    async prepare() {
      const dir = mkdtempSync(join(tmpdir(), 'crm-bench-'));
      return { env: { DATA_DIR: dir }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    key: 'postgres',
    label: 'PostgreSQL (no Redis: credential cache off)',
    async prepare() {
      const db = await scratchDatabase(env.BENCH_DATABASE_URL);
      return { env: { DATABASE_URL: db.url }, cleanup: db.drop };
    },
  },
  {
    key: 'postgres-redis',
    label: 'PostgreSQL + Redis (credential cache checked against Redis)',
    async prepare() {
      const db = await scratchDatabase(env.BENCH_DATABASE_URL);
      return { env: { DATABASE_URL: db.url, REDIS_URL: env.BENCH_REDIS_URL }, cleanup: db.drop };
    },
  },
];

async function benchBackend(backend: Backend, bareUrl: string): Promise<BackendReport> {
  log(`${backend.label}: starting`);
  const prepared = await backend.prepare();
  let services: Services | undefined;
  let server: ServerType | undefined;
  try {
    const config = loadConfig({
      LOG_LEVEL: 'warn',
      JWT_SECRET: randomBytes(32).toString('hex'),
      ...prepared.env,
    });
    // Without the request limits: 300 requests/min per IP would make this a 429 benchmark.
    services = await createServices(config, { withoutRateLimits: true, logger: createLogger('warn') });
    const seedStart = Date.now();
    const seeded = await seedOrganization(services, env.BENCH_LEADS);
    log(`seeded ${env.BENCH_LEADS} leads in ${Date.now() - seedStart} ms`);
    server = createAdaptorServer({ fetch: createApp(services).fetch });
    const base = await listen(server);
    const auth = { authorization: `Bearer ${seeded.token}` };
    const common = { connections: env.BENCH_CONNECTIONS, seconds: env.BENCH_SECONDS };
    const specs: Record<Scenario, LoadSpec> = {
      bare: { ...common, url: bareUrl, method: 'GET', headers: {} },
      list: { ...common, url: `${base}/api/v1/leads?limit=25`, method: 'GET', headers: auth },
      mcp: {
        ...common,
        url: `${base}/mcp`,
        method: 'POST',
        headers: { ...auth, ...MCP_HEADERS },
        body: MCP_BODY,
      },
      create: {
        ...common,
        url: `${base}/api/v1/leads`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Benchmark lead', status: 'new', tags: ['bench'] }),
      },
    };
    await verify(specs, env.BENCH_LEADS);
    const problems: string[] = [];
    const measure = async (scenario: Scenario): Promise<LoadResult> => {
      await runLoad({ ...specs[scenario], seconds: WARMUP_SECONDS });
      const cpuBefore = process.cpuUsage();
      const load = await runLoad(specs[scenario]);
      const cpu = process.cpuUsage(cpuBefore);
      const result = {
        ...load,
        serverCpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(1, load.total),
      };
      log(
        `${SCENARIO_LABELS[scenario]}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, server CPU ${result.serverCpuMsPerRequest.toFixed(2)} ms/request`,
      );
      problems.push(...problemsOf(scenario, result));
      return result;
    };
    // In SCENARIOS order; (d) creates leads, so it runs last and the listings see the seeded total.
    const complete: Record<Scenario, LoadResult> = {
      bare: await measure('bare'),
      list: await measure('list'),
      mcp: await measure('mcp'),
      create: await measure('create'),
    };
    if (problems.length > 0) throw new Error(`broken run on ${backend.label}:\n  ${problems.join('\n  ')}`);
    const cache = services.authCache;
    return {
      backend: backend.label,
      notes: [
        `credential cache: ${cache.mode}, ${cache.stats.hits} hits / ${cache.stats.misses} misses over the run`,
      ],
      results: complete,
      targets: evaluateTargets(complete),
    };
  } finally {
    if (server) await close(server);
    await services?.close();
    await prepared.cleanup();
  }
}

async function main(): Promise<void> {
  const wanted = new Set(env.BENCH_BACKENDS.split(',').map((s) => s.trim()));
  const startedAt = new Date();
  const header = {
    date: startedAt.toISOString(),
    commit: gitCommit(),
    machine: machine(),
    settings: `${env.BENCH_CONNECTIONS} connections, ${env.BENCH_SECONDS} s per scenario after a ${WARMUP_SECONDS} s warm-up, ${env.BENCH_LEADS} leads`,
  };
  const bare = new Hono();
  bare.get('/', (c) => c.json({ ok: true }));
  const bareServer = createAdaptorServer({ fetch: bare.fetch });
  const bareUrl = `${await listen(bareServer)}/`;
  const reports: BackendReport[] = [];
  const skipped: string[] = [];
  try {
    for (const backend of BACKENDS) {
      if (!wanted.has(backend.key)) continue;
      if (backend.key === 'postgres-redis' && !(await redisAnswers(env.BENCH_REDIS_URL))) {
        skipped.push(`${backend.label}: no Redis answered at ${env.BENCH_REDIS_URL}`);
        continue;
      }
      reports.push(await benchBackend(backend, bareUrl));
    }
  } finally {
    await close(bareServer);
  }

  const section = [
    `## ${header.date}`,
    '',
    `- Commit: ${header.commit}`,
    `- Machine: ${header.machine}`,
    `- Settings: ${header.settings}. autocannon runs in a child process; the server runs in the bench process with its request limits off (\`createServices(config, {withoutRateLimits: true})\`), because the specification's 300 requests/min per IP would otherwise turn every scenario into a 429 measurement. (a) is a bare Hono app on its own port in the same process, measured on each backend's turn.`,
    ...skipped.map((s) => `- Skipped ${s}`),
    '',
    ...reports.map(markdownTable),
  ].join('\n');
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
  process.stdout.write(`${section}\n`);
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
