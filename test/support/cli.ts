// The `crm` executable as the CLI tests run it: a fresh operator environment (embedded database in
// a temporary DATA_DIR, no inherited settings), one-shot runs, and `crm serve` started on a free port.
// One-shot runs happen inside the test process (`crm`): the same main module with the same argv,
// environment and output streams, without paying a Node start and the loading of every area per
// command; `crmProcess` runs the installed bin where the process boundary is what is tested (exit
// status of the process, signals). A DATA_DIR starts as a copy of the run's migrated database
// (`seedDataDir`) instead of running initdb and every migration again.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { createTestContext } from '../fixtures/context.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'cli', 'bin.js');
/** The module bin.js hands over to: it reads process.argv, runs the command and calls process.exit. */
const MAIN = pathToFileURL(join(ROOT, 'cli', 'main.ts')).href;

let dataDir: string;

/**
 * Gives the calling test file its own DATA_DIR for the duration of the file; `migrated` starts it
 * with the migrated database (seedDataDir), for files whose commands work on it.
 */
export function useCliDataDir(options: { migrated?: boolean } = {}): void {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'crm-cli-'));
    if (options.migrated) await seedDataDir(dataDir);
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

/**
 * Makes `dir` a DATA_DIR whose embedded database is a copy of the run's migrated one (the image of
 * test/setup/database-template.ts), where core/db/client.ts opens it (`<dir>/pglite`). Outside a run
 * with that image (the services suite) it does nothing, and the first command migrates as usual.
 */
export async function seedDataDir(dir: string): Promise<void> {
  const image = inject('pgliteImagePath');
  if (!image) return;
  const target = join(dir, 'pglite');
  await mkdir(target, { recursive: true });
  const pglite = new PGlite(target, { loadDataDir: new Blob([await readFile(image)]) });
  await pglite.waitReady;
  await pglite.close();
}

/** Thrown by the stand-in for process.exit while main runs in-process, carrying the exit code. */
class ExitCalled extends Error {
  constructor(readonly code: number) {
    super(`process.exit(${code})`);
  }
}

type Write = typeof process.stdout.write;

/** A stand-in for a stream's write that keeps the bytes, as the pipe of a child process would. */
function captureInto(chunks: Buffer[]): Write {
  return (
    chunk: string | Uint8Array,
    encodingOrDone?: BufferEncoding | ((err?: Error | null) => void),
    done?: (err?: Error | null) => void,
  ): boolean => {
    const encoding = typeof encodingOrDone === 'string' ? encodingOrDone : undefined;
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding) : Buffer.from(chunk));
    const callback = typeof encodingOrDone === 'function' ? encodingOrDone : done;
    if (callback) queueMicrotask(() => callback(null));
    return true;
  };
}

function replaceEnv(next: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(process.env)) {
    if (!(name in next)) delete process.env[name];
  }
  Object.assign(process.env, next);
}

let runs = 0;
/** One in-process run at a time: argv, env, exit and the output streams are the process's own. */
let running: Promise<unknown> = Promise.resolve();

/**
 * Runs `crm <args>` in this process as bin.js would: cli/main.ts evaluated afresh with that argv and
 * the environment of cliEnv, stdout and stderr captured, its process.exit turned into the code.
 * Everything main imports stays loaded between runs (and from the other test files of the worker).
 */
export function crm(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const run = running.then(() => runInProcess(args, env));
  running = run.catch(() => {});
  return run;
}

/** `main(argv)` (or `runCli(argv)`) of the main module, if it exports one, returning the exit code. */
function entryFunction(entry: unknown): ((argv: string[]) => Promise<number>) | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const found = 'runCli' in entry ? entry.runCli : 'main' in entry ? entry.main : undefined;
  if (typeof found !== 'function') return undefined;
  return async (argv) => Number(await found(argv));
}

async function runInProcess(args: string[], env: Record<string, string>): Promise<Run> {
  const saved = {
    argv: process.argv,
    env: { ...process.env },
    exit: process.exit,
    stdout: process.stdout.write,
    stderr: process.stderr.write,
  };
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let code: number | undefined;
  try {
    replaceEnv(cliEnv(env));
    process.argv = [process.execPath, BIN, ...args];
    process.exit = (exitCode?: number | string | null): never => {
      throw new ExitCalled(Number(exitCode ?? 0));
    };
    process.stdout.write = captureInto(stdout);
    process.stderr.write = captureInto(stderr);
    runs += 1;
    // A new query makes a new module instance, so its top level (the run) is evaluated again.
    const entry: unknown = await import(`${MAIN}?run=${runs}`);
    // A main module that only exports its entry (the bin calling it) is called here instead.
    const main = entryFunction(entry);
    if (main) code = await main(args);
  } catch (err) {
    if (!(err instanceof ExitCalled)) throw err;
    code = err.code;
  } finally {
    process.stdout.write = saved.stdout;
    process.stderr.write = saved.stderr;
    process.exit = saved.exit;
    process.argv = saved.argv;
    replaceEnv(saved.env);
  }
  if (code === undefined) throw new Error(`crm ${args.join(' ')} returned without calling process.exit`);
  return { code, stdout: Buffer.concat(stdout).toString(), stderr: Buffer.concat(stderr).toString() };
}

/** Runs the installed `crm` executable as a child process. */
export function crmProcess(args: string[], env: Record<string, string> = {}): Promise<Run> {
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
  await seedDataDir(dir);
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
  for (let attempt = 0; attempt < 2000; attempt++) {
    if (child.exitCode !== null) throw new Error(`serve exited early: ${output}`);
    const health = await fetch(`${base}/healthz`).catch(() => undefined);
    if (health?.ok) return { child, base, output: () => output };
    await new Promise((r) => setTimeout(r, 50));
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

/**
 * The server the remote commands (tools call, keys create, admin --url) talk to, in this process:
 * the app over the file's copy of the migrated database (test/fixtures/context.ts), on a free port.
 * Use startServe where the server must be its own process (the DATA_DIR lock, signals).
 */
export async function serveInProcess(
  env: Record<string, string> = {},
): Promise<{ base: string; stop: () => Promise<void> }> {
  const context = await createTestContext(env);
  const server = serve({ fetch: context.app.fetch, hostname: '127.0.0.1', port: 0 });
  // Idle keep-alive sockets outlive the client's (undici keeps them about 4 s against Node's 5 s):
  // on a loaded machine the server could otherwise close one just as the client reuses it, and the
  // request fails with ECONNRESET. The client closes first; stop() closes what is left.
  if ('keepAliveTimeout' in server) server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
  return {
    base: `http://127.0.0.1:${address.port}`,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      });
      await context.close();
    },
  };
}
