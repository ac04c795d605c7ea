// The `crm` executable as the CLI tests run it: a fresh operator environment (embedded database in
// a temporary DATA_DIR, no inherited settings), one-shot runs, and `crm serve` started on a free port.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'cli', 'bin.js');

let dataDir: string;

/** Gives the calling test file its own DATA_DIR for the duration of the file. */
export function useCliDataDir(): void {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'crm-cli-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });
}

/** The environment of a fresh operator shell: embedded database in the temp dir, nothing else set. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    // Test SMTP peers of connected accounts listen on 127.0.0.1 (the SSRF guard refuses it otherwise).
    CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS: 'true',
    ...extra,
  };
  const inherited = [
    'DATABASE_URL',
    'CRM_ADMIN_TOKEN',
    'PORT',
    'HOST',
    'JWT_SECRET',
    'REDIS_URL',
    'CRM_URL',
    'CRM_TOKEN',
  ];
  for (const name of inherited) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function crm(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: cliEnv(env) }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = address && typeof address === 'object' ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

export function oneErrorLine(run: Run): string {
  const lines = run.stderr.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^crm: \S/);
  return lines[0] ?? '';
}

export async function startServe(
  dir: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: cliEnv({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const base = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 400; attempt++) {
    if (child.exitCode !== null) throw new Error(`serve exited early: ${output}`);
    const health = await fetch(`${base}/healthz`).catch(() => undefined);
    if (health?.ok) return { child, base, output: () => output };
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`serve did not answer /healthz: ${output}`);
}

/** Stops a server of startServe (SIGTERM, waiting for its exit) and removes its data directory. */
export async function stopServe(server: { child: ChildProcess } | undefined, dir: string): Promise<void> {
  if (server && server.child.exitCode === null) {
    const exited = exitOf(server.child);
    server.child.kill('SIGTERM');
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
}
