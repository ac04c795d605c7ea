// `crm serve --processes 2` as an operator runs it, on a scratch PostgreSQL database and Redis: both
// processes answer on the one port, the per-IP budget is spent once across them (Redis), a process
// that dies is replaced, and SIGTERM stops them all with exit 0. Which process answered is read from
// the request log lines, whose `pid` every log line carries: nothing new is exposed for the test.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, onPostgres, TEST_DATABASE_URL } from '../helpers.ts';
import { BIN, cliEnv, exitOf, freePort, ROOT, useCliDataDir } from '../support/cli.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

useCliDataDir();

interface LogLine {
  pid?: number;
  /** The API process a line of the primary is about. */
  child_pid?: number;
  msg?: string;
  path?: string;
  status?: number;
  slot?: number;
  code?: number;
}

/** The JSON log lines the server and its processes wrote so far (stdout is shared). */
function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** Resolves once `check` holds over the log lines; fails after `limitMs` with the output. */
async function untilLogged(output: () => string, check: (lines: LogLine[]) => boolean, limitMs = 120_000) {
  const deadline = Date.now() + limitMs;
  while (!check(logLines(output()))) {
    if (Date.now() > deadline) throw new Error(`never logged what was awaited:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One request on a connection of its own, so the primary hands each to the next process in turn. */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end(body);
  });
}

const listeningPids = (lines: LogLine[]) =>
  lines.filter((l) => l.msg === 'API process listening').map((l) => l.child_pid ?? 0);

let child: ChildProcess | undefined;
let drop: (() => Promise<void>) | undefined;

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = exitOf(child);
    child.kill('SIGKILL');
    await exited;
  }
  await drop?.();
});

describe.skipIf(!onPostgres)('crm serve --processes 2', { timeout: 300_000 }, () => {
  it('serves from two processes, shares the per-IP budget, replaces a dead process and stops on SIGTERM with 0', async () => {
    if (!TEST_DATABASE_URL) throw new Error('the services suite runs on PostgreSQL');
    const scratch = await createScratchDatabase(TEST_DATABASE_URL);
    drop = scratch.drop;
    const port = await freePort();
    const server = spawn(process.execPath, [BIN, 'serve', '--processes', '2'], {
      cwd: ROOT,
      env: cliEnv({
        ...scratch.env,
        REDIS_URL,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        // The budget is per client IP: one of this test's own, so no other run on this Redis shares it.
        TRUST_PROXY: '1',
        CRM_QUEUE_PREFIX: `crm-processes-${randomBytes(4).toString('hex')}`,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = server;
    let output = '';
    server.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    server.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const out = () => output;
    await untilLogged(out, (lines) => listeningPids(lines).length === 2);
    const [first, second] = listeningPids(logLines(output));
    expect(new Set([first, second]).size).toBe(2);
    // The relay, the sweeper and the job workers run in one process, not in each.
    await untilLogged(out, (lines) => lines.some((l) => l.msg === 'background workers started'));
    expect(logLines(output).filter((l) => l.msg === 'background workers started')).toHaveLength(1);

    // The auth budget is 10 per minute per IP (core/rate-limits.ts): spent once over both processes.
    const ip = `10.${[1, 2, 3].map(() => randomBytes(1)[0]).join('.')}`;
    const statuses: number[] = [];
    for (let i = 0; i < 24; i++) {
      statuses.push(
        await send(
          port,
          'POST',
          '/api/v1/auth/login',
          { 'content-type': 'application/json', 'x-forwarded-for': ip },
          JSON.stringify({ email: 'nobody@example.test', password: 'not the password' }),
        ),
      );
    }
    expect(statuses.filter((s) => s !== 429)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(14);
    await untilLogged(out, (lines) => lines.filter((l) => l.path === '/api/v1/auth/login').length === 24);
    const answeredBy = new Set(
      logLines(output)
        .filter((l) => l.msg === 'request' && l.path === '/api/v1/auth/login')
        .map((l) => l.pid),
    );
    expect(answeredBy).toEqual(new Set([first, second]));

    // A process that dies is replaced; the server keeps answering meanwhile.
    process.kill(second ?? 0, 'SIGKILL');
    await untilLogged(out, (lines) => lines.some((l) => l.msg === 'API process exited; restarting'));
    expect(await send(port, 'GET', '/healthz')).toBe(200);
    await untilLogged(out, (lines) => listeningPids(lines).length === 3);
    const replacement = listeningPids(logLines(output))[2];
    expect([first, second]).not.toContain(replacement);

    const exited = exitOf(server);
    server.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    const stopped = logLines(output).filter((l) => l.msg === 'API process stopped');
    expect(stopped.map((l) => l.code)).toEqual([0, 0]);
  });
});
