// `npm run bench:processes`: how `crm serve` scales from one API process to two on one machine
// (issue 24 item 6), black-box: the real `crm serve --processes N` on PostgreSQL + Redis with
// RATE_LIMITS=off, 10,000 leads (seedOrganization), autocannon on GET /api/v1/leads?limit=25 with a
// PAT. Turns alternate 1, 2, 1, 2... on the same database so drift on a shared machine hits both.
// Besides requests/s, the CPU time of the server's whole process tree per request (from /proc),
// which moves less than requests/s when other processes share the machine.
//
// Environment: BENCH_SECONDS (default 10, after a 3 s warm-up), BENCH_CONNECTIONS (default 50),
// BENCH_TURNS (pairs, default 2), BENCH_PROCESSES (comma list, default "1,2"), BENCH_DATABASE_URL,
// BENCH_REDIS_URL, BENCH_APPEND=0 (print without appending to bench/results.md).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServices } from '../app/services.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { freePort } from '../test/support/cli.ts';
import { createDatabase } from '../test/support/postgres-admin.ts';
import { gitCommit, machine } from './environment.ts';
import { type LoadResult, runLoad } from './measure.ts';
import { seedOrganization } from './seed.ts';
import { machineCpuMs, startNodeOptions } from './server-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'cli', 'bin.js');
const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const TURNS = Number(env.BENCH_TURNS ?? 2);
const PROCESS_COUNTS = (env.BENCH_PROCESSES ?? '1,2').split(',').map(Number);
const ADMIN_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const LEADS = 10_000;
const JWT_SECRET = randomBytes(32).toString('hex');

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds (user + system) a process and its children (the cluster's API processes) have used. */
function treeCpuMs(pid: number): number {
  let children: number[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    // pgrep exits 1 when there is no child: a single process.
  }
  let ticks = 0;
  for (const p of [pid, ...children]) {
    // The fields after the command (which may hold spaces) start after its closing parenthesis.
    const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

interface Server {
  child: ChildProcess;
  base: string;
  stop(): Promise<void>;
}

/** `crm serve --processes n` on the bench database; resolves once every API process listens. */
async function startServer(databaseUrl: string, processes: number): Promise<Server> {
  const port = await freePort();
  // With npm start's Node options, which cluster.fork hands on to every API process.
  const args = [...startNodeOptions(), BIN, 'serve', '--no-workers', '--processes', String(processes)];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: env.PATH,
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      RATE_LIMITS: 'off',
      JWT_SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      CRM_QUEUE_PREFIX: `bench-processes-${randomBytes(4).toString('hex')}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    // Only what readiness needs is kept: the request log lines would grow without bound.
    if (output.length < 1_000_000) output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const base = `http://127.0.0.1:${port}`;
  const ready = () =>
    processes === 1
      ? output.includes('CRM server listening')
      : (output.match(/"API process listening"/g)?.length ?? 0) >= processes;
  const deadline = Date.now() + 300_000;
  while (!ready()) {
    if (child.exitCode !== null) throw new Error(`crm serve exited: ${output}`);
    if (Date.now() > deadline) throw new Error(`crm serve did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    base,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface Turn {
  processes: number;
  result: LoadResult;
  cpuMsPerRequest: number;
  /** Share of the machine's CPUs busy during the turn (/proc/stat): 1 means no core had time left. */
  machineBusy: number;
}

async function measure(databaseUrl: string, token: string, processes: number): Promise<Turn> {
  const server = await startServer(databaseUrl, processes);
  try {
    const spec = {
      url: `${server.base}/api/v1/leads?limit=25`,
      method: 'GET' as const,
      headers: { authorization: `Bearer ${token}` },
      connections: CONNECTIONS,
    };
    await runLoad({ ...spec, seconds: 3 });
    const pid = server.child.pid ?? 0;
    const cpuBefore = treeCpuMs(pid);
    const machineBefore = machineCpuMs();
    const startedAt = performance.now();
    const result = await runLoad({ ...spec, seconds: SECONDS });
    const cpuMs = treeCpuMs(pid) - cpuBefore;
    const machineBusy =
      (machineCpuMs() - machineBefore) / ((performance.now() - startedAt) * availableParallelism());
    const answered = result.total - result.errors - result.timeouts;
    return { processes, result, cpuMsPerRequest: answered > 0 ? cpuMs / answered : Number.NaN, machineBusy };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const startedOn = machine();
  const database = await createDatabase(ADMIN_URL, 'crm_bench_processes');
  try {
    const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', DATA_DIR: '/nonexistent' });
    const services = await createServices(config, { inMemory: true, logger: createLogger('silent') });
    const { token } = await seedOrganization(services, LEADS);
    await services.close();
    const turns: Turn[] = [];
    for (let pair = 0; pair < TURNS; pair++) {
      for (const processes of PROCESS_COUNTS) {
        const turn = await measure(database.url, token, processes);
        turns.push(turn);
        process.stdout.write(
          `${processes} process(es): ${turn.result.requestsPerSecond.toFixed(0)} req/s, p50 ${turn.result.p50} ms, ` +
            `p99 ${turn.result.p99} ms, ${turn.cpuMsPerRequest.toFixed(2)} CPU ms/request, machine ${(100 * turn.machineBusy).toFixed(0)}% busy, non-2xx ${turn.result.non2xx}` +
            ` (statuses ${JSON.stringify(turn.result.statusCodes)})\n`,
        );
      }
    }
    const rows = turns.map(
      (t) =>
        `| ${t.processes} | ${t.result.requestsPerSecond.toFixed(0)} | ${t.result.p50} | ${t.result.p99} | ` +
        `${t.result.total} | ${t.result.non2xx} | ${t.cpuMsPerRequest.toFixed(2)} | ${(100 * t.machineBusy).toFixed(0)}% |`,
    );
    const mean = (n: number) => {
      const of = turns.filter((t) => t.processes === n).map((t) => t.result.requestsPerSecond);
      return of.reduce((a, b) => a + b, 0) / Math.max(1, of.length);
    };
    const [one, two] = PROCESS_COUNTS;
    const ratio = one !== undefined && two !== undefined ? mean(two) / mean(one) : Number.NaN;
    const text = [
      '',
      `## ${new Date().toISOString()} — issue 24 item 6: crm serve --processes, ${PROCESS_COUNTS.join(' vs ')} (alternated)`,
      '',
      `- Commit: ${gitCommit()}`,
      `- Machine: ${startedOn}`,
      `- Settings: \`npm run bench:processes\`: the real \`crm serve --no-workers --processes N\` on PostgreSQL + Redis, RATE_LIMITS=off, ${LEADS} leads, GET /api/v1/leads?limit=25 with a PAT, ${CONNECTIONS} connections, ${SECONDS} s per turn after a 3 s warm-up, autocannon in a child process on the same machine. CPU ms/request is the server's whole process tree (primary and API processes) from /proc; the machine's CPUs busy is every CPU's non-idle time (/proc/stat) over the turn's time and cores: where one process already leaves no core idle, a second cannot add requests/s on this machine.`,
      '',
      '| processes | requests/s | p50 ms | p99 ms | requests | non-2xx | server CPU ms/request | machine CPUs busy |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      `Mean requests/s, ${two} over ${one} processes: ${ratio.toFixed(2)}×.`,
      '',
    ].join('\n');
    process.stdout.write(text);
    if (env.BENCH_APPEND !== '0') appendFileSync(join(ROOT, 'bench', 'results.md'), text);
  } finally {
    await database.drop();
  }
}

await main();
process.exit(0);
