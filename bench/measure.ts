// Running one load (in a child process) and judging a backend's results against the ratios of
// issue 24: the REST list at >= 0.9x of the hand-written floor (bench/floor.ts), MCP at >= 0.9x of
// REST, the REST create at >= 0.8x of the floor's insert.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export const loadSpec = z.object({
  url: z.string().url(),
  method: z.enum(['GET', 'POST']),
  headers: z.record(z.string(), z.string()),
  body: z.string().optional(),
  connections: z.number().int().positive(),
  seconds: z.number().positive(),
});
export type LoadSpec = z.infer<typeof loadSpec>;

export const loadResult = z.object({
  requestsPerSecond: z.number(),
  /** Milliseconds. */
  p50: z.number(),
  p99: z.number(),
  total: z.number(),
  non2xx: z.number(),
  errors: z.number(),
  timeouts: z.number(),
  statusCodes: z.record(z.string(), z.number()),
  /**
   * The server process's CPU time (user + system) per answered request, in milliseconds, when the
   * server is measured (bench/run.ts reads the server's process group from /proc). Unlike requests/s it hardly moves when other
   * processes share the machine, so it is the figure to compare across commits on a busy machine.
   */
  serverCpuMsPerRequest: z.number().optional(),
  /** The load generator's own CPU time (its child process) per answered request, in milliseconds. */
  loadCpuMsPerRequest: z.number().optional(),
  /**
   * Every CPU of the machine that was not idle during the load (/proc/stat: the server, PostgreSQL,
   * Redis, the load generator and the kernel's loopback work), per answered request, in
   * milliseconds. On a saturated machine the requests/s of two scenarios stand in about the inverse
   * ratio of this figure, so it tells how much of a ratio is the server's own cost.
   */
  machineCpuMsPerRequest: z.number().optional(),
});
export type LoadResult = z.infer<typeof loadResult>;

const loadScript = fileURLToPath(new URL('./load.ts', import.meta.url));

/** Runs autocannon in a separate Node process (tsx-loaded) and returns its parsed result. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', loadScript, JSON.stringify(spec)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`autocannon exited with ${code}: ${stderr.trim()}`));
        return;
      }
      try {
        resolve(loadResult.parse(JSON.parse(stdout.trim().split('\n').pop() ?? 'null')));
      } catch (err) {
        reject(new Error(`unreadable autocannon output: ${stdout} ${stderr}`, { cause: err }));
      }
    });
  });
}

export const SCENARIOS = ['floorList', 'list', 'mcp', 'floorCreate', 'create'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export const SCENARIO_LABELS: Record<Scenario, string> = {
  floorList: '(f1) floor: GET /api/v1/leads?limit=25, hand-written (bench/floor.ts)',
  list: '(b) GET /api/v1/leads?limit=25 (PAT)',
  mcp: '(c) MCP tools/call list_leads (PAT)',
  floorCreate: '(f2) floor: POST /api/v1/leads, hand-written (bench/floor.ts)',
  create: '(d) POST /api/v1/leads (PAT)',
};

/** The ratios issue 24 sets: each scenario of the product against its anchor, the same run. */
export const RATIO_TARGETS: readonly { name: string; of: Scenario; to: Scenario; atLeast: number }[] = [
  { name: '(b) REST list / (f1) floor', of: 'list', to: 'floorList', atLeast: 0.9 },
  { name: '(c) MCP list / (b) REST list', of: 'mcp', to: 'list', atLeast: 0.9 },
  { name: '(d) REST create / (f2) floor', of: 'create', to: 'floorCreate', atLeast: 0.8 },
];

export interface Target {
  name: string;
  met: boolean;
  /** The measured figure against the bound, in words. */
  detail: string;
}

/** The median of the rounds' figures (requests/s, latencies, CPU): what a report shows per scenario. */
export function medianResult(rounds: readonly LoadResult[]): LoadResult {
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  };
  const first = rounds[0];
  if (!first) throw new Error('no rounds');
  const medianOf = (pick: (r: LoadResult) => number | undefined): number | undefined => {
    const xs = rounds.map(pick).filter((x): x is number => x !== undefined);
    return xs.length ? median(xs) : undefined;
  };
  const server = medianOf((r) => r.serverCpuMsPerRequest);
  const load = medianOf((r) => r.loadCpuMsPerRequest);
  const machine = medianOf((r) => r.machineCpuMsPerRequest);
  return {
    ...first,
    requestsPerSecond: median(rounds.map((r) => r.requestsPerSecond)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    total: rounds.reduce((n, r) => n + r.total, 0),
    ...(server !== undefined ? { serverCpuMsPerRequest: server } : {}),
    ...(load !== undefined ? { loadCpuMsPerRequest: load } : {}),
    ...(machine !== undefined ? { machineCpuMsPerRequest: machine } : {}),
  };
}

export function evaluateTargets(results: Partial<Record<Scenario, LoadResult>>): Target[] {
  return RATIO_TARGETS.map((t) => {
    const of = results[t.of]?.requestsPerSecond;
    const to = results[t.to]?.requestsPerSecond;
    if (of === undefined || to === undefined || to === 0) {
      return { name: `${t.name} >= ${t.atLeast}x`, met: false, detail: 'not measured on this backend' };
    }
    const ratio = of / to;
    return {
      name: `${t.name} >= ${t.atLeast}x`,
      met: ratio >= t.atLeast,
      detail: `${ratio.toFixed(2)}x (${of.toFixed(0)} / ${to.toFixed(0)})`,
    };
  });
}

/** Every response must have been a 2xx and every connection must have held: anything else is a broken run. */
export function problemsOf(scenario: Scenario, result: LoadResult): string[] {
  const problems: string[] = [];
  if (result.total === 0) problems.push(`${scenario}: no request completed`);
  if (result.non2xx > 0) {
    problems.push(`${scenario}: ${result.non2xx} non-2xx responses (${JSON.stringify(result.statusCodes)})`);
  }
  if (result.errors > 0)
    problems.push(`${scenario}: ${result.errors} connection errors (${result.timeouts} timeouts)`);
  return problems;
}

export interface BackendReport {
  backend: string;
  notes: string[];
  /** Per scenario, each round in order. */
  rounds: Partial<Record<Scenario, LoadResult[]>>;
  results: Partial<Record<Scenario, LoadResult>>;
  targets: Target[];
}

/**
 * For each ratio target, where the machine's CPU per request differs between the two scenarios:
 * the server's, the load generator's, and the rest (PostgreSQL, Redis, the kernel). The machine
 * figure also gives the ratio a saturated machine would allow if only CPU limited it, which is what
 * a shortfall is to be read against: a scenario whose answer is larger costs the load generator and
 * the kernel more too, and no server change recovers that.
 */
export function costBreakdowns(results: Partial<Record<Scenario, LoadResult>>): string[] {
  const lines: string[] = [];
  for (const t of RATIO_TARGETS) {
    const of = results[t.of];
    const to = results[t.to];
    const [m1, m0] = [of?.machineCpuMsPerRequest, to?.machineCpuMsPerRequest];
    if (!of || !to || m1 === undefined || m0 === undefined || m1 === 0) continue;
    const us = (x: number) => `${x >= 0 ? '+' : ''}${(x * 1000).toFixed(0)} µs`;
    const server = (of.serverCpuMsPerRequest ?? 0) - (to.serverCpuMsPerRequest ?? 0);
    const load = (of.loadCpuMsPerRequest ?? 0) - (to.loadCpuMsPerRequest ?? 0);
    lines.push(
      `${t.name}: CPU per request ${us(m1 - m0)} on the machine (server ${us(server)}, load generator ${us(load)}, the rest ${us(m1 - m0 - server - load)}); by CPU alone the ratio would be ${(m0 / m1).toFixed(2)}x`,
    );
  }
  return lines;
}

export function markdownTable(report: BackendReport): string {
  const measured = SCENARIOS.filter((s) => report.results[s]);
  const lines = [
    `#### ${report.backend}`,
    '',
    ...report.notes.map((n) => `- ${n}`),
    ...(report.notes.length ? [''] : []),
    '| scenario | requests/s (median) | each round | p50 ms | p99 ms | requests | server CPU ms/request | load generator CPU ms/request | machine CPU ms/request |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|',
    ...measured.map((s) => {
      const r = report.results[s];
      if (!r) return '';
      const each = (report.rounds[s] ?? []).map((x) => x.requestsPerSecond.toFixed(0)).join(', ');
      const ms = (x: number | undefined) => x?.toFixed(2) ?? '-';
      return `| ${SCENARIO_LABELS[s]} | ${r.requestsPerSecond.toFixed(0)} | ${each} | ${r.p50} | ${r.p99} | ${r.total} | ${ms(r.serverCpuMsPerRequest)} | ${ms(r.loadCpuMsPerRequest)} | ${ms(r.machineCpuMsPerRequest)} |`;
    }),
    '',
    '| target | result | measured |',
    '|---|---|---|',
    ...report.targets.map((t) => `| ${t.name} | ${t.met ? 'met' : '**not met**'} | ${t.detail} |`),
    '',
    ...costBreakdowns(report.results).map((line) => `- ${line}`),
    '',
  ];
  return lines.join('\n');
}
