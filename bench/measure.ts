// Running one load (in a child process) and judging a backend's results against the targets of
// the first benchmark: (b) >= 25% of (a)'s requests/s, (c) >= 60% of (b)'s, p99 of (b) < 25 ms.
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
   * server runs in the measuring process (bench/run.ts). Unlike requests/s it hardly moves when other
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

export const SCENARIOS = ['bare', 'list', 'mcp', 'create'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export const SCENARIO_LABELS: Record<Scenario, string> = {
  bare: '(a) bare Hono route, constant',
  list: '(b) GET /api/v1/leads?limit=25 (PAT)',
  mcp: '(c) MCP tools/call list_leads (PAT)',
  create: '(d) POST /api/v1/leads (PAT)',
};

export interface Target {
  name: string;
  met: boolean;
  /** The measured figure against the bound, in words. */
  detail: string;
}

export function evaluateTargets(results: Record<Scenario, LoadResult>): Target[] {
  const { bare, list, mcp } = results;
  const listShare = bare.requestsPerSecond > 0 ? list.requestsPerSecond / bare.requestsPerSecond : 0;
  const mcpShare = list.requestsPerSecond > 0 ? mcp.requestsPerSecond / list.requestsPerSecond : 0;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    {
      name: '(b) requests/s >= 25% of (a)',
      met: listShare >= 0.25,
      detail: `${pct(listShare)} (${list.requestsPerSecond.toFixed(0)} / ${bare.requestsPerSecond.toFixed(0)})`,
    },
    {
      name: '(c) requests/s >= 60% of (b)',
      met: mcpShare >= 0.6,
      detail: `${pct(mcpShare)} (${mcp.requestsPerSecond.toFixed(0)} / ${list.requestsPerSecond.toFixed(0)})`,
    },
    {
      name: '(b) p99 < 25 ms at 50 connections',
      met: list.p99 < 25,
      detail: `${list.p99} ms`,
    },
  ];
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
  results: Record<Scenario, LoadResult>;
  targets: Target[];
}

export function markdownTable(report: BackendReport): string {
  const lines = [
    `#### ${report.backend}`,
    '',
    ...report.notes.map((n) => `- ${n}`),
    ...(report.notes.length ? [''] : []),
    '| scenario | requests/s | p50 ms | p99 ms | requests | server CPU ms/request |',
    '|---|---:|---:|---:|---:|---:|',
    ...SCENARIOS.map((s) => {
      const r = report.results[s];
      return `| ${SCENARIO_LABELS[s]} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.total} | ${r.serverCpuMsPerRequest?.toFixed(2) ?? '-'} |`;
    }),
    '',
    '| target | result | measured |',
    '|---|---|---|',
    ...report.targets.map((t) => `| ${t.name} | ${t.met ? 'met' : '**not met**'} | ${t.detail} |`),
    '',
  ];
  return lines.join('\n');
}
