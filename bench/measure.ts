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
  const cpu = rounds.map((r) => r.serverCpuMsPerRequest).filter((x): x is number => x !== undefined);
  return {
    ...first,
    requestsPerSecond: median(rounds.map((r) => r.requestsPerSecond)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    total: rounds.reduce((n, r) => n + r.total, 0),
    ...(cpu.length ? { serverCpuMsPerRequest: median(cpu) } : {}),
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

export function markdownTable(report: BackendReport): string {
  const measured = SCENARIOS.filter((s) => report.results[s]);
  const lines = [
    `#### ${report.backend}`,
    '',
    ...report.notes.map((n) => `- ${n}`),
    ...(report.notes.length ? [''] : []),
    '| scenario | requests/s (median) | each round | p50 ms | p99 ms | requests | server CPU ms/request |',
    '|---|---:|---|---:|---:|---:|---:|',
    ...measured.map((s) => {
      const r = report.results[s];
      if (!r) return '';
      const each = (report.rounds[s] ?? []).map((x) => x.requestsPerSecond.toFixed(0)).join(', ');
      return `| ${SCENARIO_LABELS[s]} | ${r.requestsPerSecond.toFixed(0)} | ${each} | ${r.p50} | ${r.p99} | ${r.total} | ${r.serverCpuMsPerRequest?.toFixed(2) ?? '-'} |`;
    }),
    '',
    '| target | result | measured |',
    '|---|---|---|',
    ...report.targets.map((t) => `| ${t.name} | ${t.met ? 'met' : '**not met**'} | ${t.detail} |`),
    '',
  ];
  return lines.join('\n');
}
