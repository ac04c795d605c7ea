// `npm run bench:profile -- <scenario>`: where the server's CPU goes for one scenario of
// `npm run bench` (list, mcp or create). Seeds a scratch PostgreSQL database as bench/run.ts does,
// starts what `npm start` runs with V8's CPU profiler on (`node --cpu-prof cli/bin.js serve`), loads the scenario with
// autocannon, stops the server and prints the self time by package or file and by function. A
// profile's shares hold on a busy machine where requests/s does not, so this is how a shortfall
// of a ratio is explained. The .cpuprofile stays in bench/results/profiles/ for Chrome's DevTools.
//
// Environment: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50), BENCH_LEADS (default
// 10000), BENCH_DATABASE_URL, BENCH_REDIS_URL (set to profile with Redis), PROFILE_TOP (default 40).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createServices } from '../app/services.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { createDatabase } from '../test/support/postgres-admin.ts';
import { type LoadSpec, runLoad } from './measure.ts';
import { seedOrganization } from './seed.ts';
import { startServer } from './server-process.ts';

const env = z
  .object({
    BENCH_SECONDS: z.coerce.number().positive().default(10),
    BENCH_CONNECTIONS: z.coerce.number().int().positive().default(50),
    BENCH_LEADS: z.coerce.number().int().positive().default(10_000),
    BENCH_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
    BENCH_REDIS_URL: z.string().url().optional(),
    PROFILE_TOP: z.coerce.number().int().positive().default(40),
  })
  .parse(process.env);
const root = fileURLToPath(new URL('..', import.meta.url));
const scenario = z.enum(['list', 'mcp', 'create']).parse(process.argv[2] ?? 'list');

const cpuProfile = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
    }),
  ),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});

/** The self time of each node of a V8 CPU profile, summed by package (or project file) and by function. */
function summarize(file: string, top: number, window: { fromMs: number; toMs: number }): string {
  const profile = cpuProfile.parse(JSON.parse(readFileSync(file, 'utf8')));
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  let total = 0;
  let at = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    // Only the load's own seconds: not the start (module loading) nor the stop.
    if (at < window.fromMs * 1000 || at > window.toMs * 1000) return;
    const frame = frames.get(id);
    if (!frame || frame.functionName === '(idle)') return;
    total += us;
    const inModules = frame.url.split('/node_modules/');
    const where =
      inModules.length > 1 ? (inModules.at(-1) ?? '') : frame.url.replace(/^file:\/\/.*?\/dist\//, '');
    const place =
      inModules.length > 1
        ? where.startsWith('@')
          ? where.split('/').slice(0, 2).join('/')
          : (where.split('/')[0] ?? '')
        : where || `(${frame.functionName})`;
    add(byPlace, place, us);
    add(byFunction, `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`, us);
  });
  const rows = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
  return [
    `profile ${file}: ${(total / 1000).toFixed(0)} ms of CPU sampled during the load (idle excluded)`,
    '',
    'self time by package or file:',
    ...rows(byPlace),
    '',
    'self time by function:',
    ...rows(byFunction),
  ].join('\n');
}

async function main(): Promise<void> {
  const db = await createDatabase(env.BENCH_DATABASE_URL, 'crm_profile');
  const profiles = join(fileURLToPath(new URL('.', import.meta.url)), 'results', 'profiles');
  mkdirSync(profiles, { recursive: true });
  const serverEnv: Record<string, string> = {
    LOG_LEVEL: 'warn',
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATABASE_URL: db.url,
    ...(env.BENCH_REDIS_URL ? { REDIS_URL: env.BENCH_REDIS_URL } : {}),
  };
  try {
    // Built before the server starts, so the profile holds no build.
    execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: root, stdio: 'inherit' });
    const services = await createServices(loadConfig(serverEnv), {
      withoutRateLimits: true,
      logger: createLogger('warn'),
    });
    const seeded = await seedOrganization(services, env.BENCH_LEADS).finally(() => services.close());
    const before = new Set(readdirSync(profiles));
    const server = await startServer({ ...serverEnv, RATE_LIMITS: 'off' }, [
      '--cpu-prof',
      `--cpu-prof-dir=${profiles}`,
    ]);
    const auth = { authorization: `Bearer ${seeded.token}` };
    const common = { connections: env.BENCH_CONNECTIONS, seconds: env.BENCH_SECONDS };
    let window = { fromMs: 0, toMs: 0 };
    try {
      const spec: LoadSpec =
        scenario === 'list'
          ? { ...common, url: `${server.url}/api/v1/leads?limit=25`, method: 'GET', headers: auth }
          : scenario === 'mcp'
            ? {
                ...common,
                url: `${server.url}/mcp`,
                method: 'POST',
                headers: {
                  ...auth,
                  'content-type': 'application/json',
                  accept: 'application/json, text/event-stream',
                  'mcp-protocol-version': '2025-06-18',
                },
                body: JSON.stringify({
                  jsonrpc: '2.0',
                  id: 1,
                  method: 'tools/call',
                  params: { name: 'list_leads', arguments: { limit: 25 } },
                }),
              }
            : {
                ...common,
                url: `${server.url}/api/v1/leads`,
                method: 'POST',
                headers: { ...auth, 'content-type': 'application/json' },
                body: JSON.stringify({ name: 'Benchmark lead', status: 'new', tags: ['bench'] }),
              };
      await runLoad({ ...spec, seconds: Math.min(3, env.BENCH_SECONDS) });
      const fromMs = Date.now() - server.startedAt;
      const result = await runLoad(spec);
      window = { fromMs, toMs: Date.now() - server.startedAt };
      process.stderr.write(
        `[profile] ${scenario}: ${result.requestsPerSecond.toFixed(0)} req/s, ${result.total} requests, ${result.non2xx} non-2xx\n`,
      );
    } finally {
      await server.stop();
    }
    const written = readdirSync(profiles)
      .filter((f) => !before.has(f) && f.endsWith('.cpuprofile'))
      .map((f) => join(profiles, f))
      .sort((a, b) => readFileSync(b).length - readFileSync(a).length);
    const largest = written[0];
    if (!largest) throw new Error('no CPU profile was written');
    process.stdout.write(`${summarize(largest, env.PROFILE_TOP, window)}\n`);
  } finally {
    await db.drop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
