// Locks in graceful shutdown of a real `crm serve` process: on SIGTERM it refuses new connections, finishes the request in flight, and exits 0.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDataDir } from './support/cli.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'cli', 'bin.js');
const EMAIL = 'drain@example.test';
const PASSWORD = 'a long password';
/** The login body is sent in this many pieces, one every CHUNK_INTERVAL_MS: about 1.5 s in flight. */
const CHUNKS = 15;
const CHUNK_INTERVAL_MS = 100;

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'crm-shutdown-'));
  // The run's migrated database, so the server starts without initdb and every migration.
  await seedDataDir(dataDir);
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens a TCP connection; resolves 'connected' or the error code (ECONNREFUSED once the server stopped listening). */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

interface SlowResponse {
  status: number;
  body: string;
  endedAt: number;
  connection: string | undefined;
}

/**
 * POST /api/v1/auth/login with a large JSON body (the credentials padded with whitespace) written
 * in pieces: the server cannot answer before the last piece, so the request stays in flight.
 */
function slowLogin(port: number, agent: Agent, onChunk: (sent: number) => void): Promise<SlowResponse> {
  const json = JSON.stringify({ email: EMAIL, password: PASSWORD });
  const body = Buffer.from(json + ' '.repeat(300_000));
  const size = Math.ceil(body.length / CHUNKS);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/auth/login',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            endedAt: Date.now(),
            connection: res.headers.connection,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    void (async () => {
      for (let i = 0; i < CHUNKS; i++) {
        req.write(body.subarray(i * size, (i + 1) * size));
        onChunk(i + 1);
        if (i < CHUNKS - 1) await sleep(CHUNK_INTERVAL_MS);
      }
      req.end();
    })();
  });
}

describe('crm serve on SIGTERM', { timeout: 120_000 }, () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('completes the in-flight request with its full 200 response, refuses new connections, exits 0', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    };
    for (const name of [
      'DATABASE_URL',
      'REDIS_URL',
      'JWT_SECRET',
      'CRM_ADMIN_TOKEN',
      'CORS_ALLOWED_ORIGINS',
    ]) {
      delete env[name];
    }
    const server = spawn(process.execPath, [BIN, 'serve'], {
      cwd: ROOT,
      env,
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
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
      (resolve) => server.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
    );

    const base = `http://127.0.0.1:${port}`;
    let up = false;
    for (let attempt = 0; attempt < 400 && !up; attempt++) {
      if (server.exitCode !== null) throw new Error(`serve exited early: ${output}`);
      up = (await fetch(`${base}/healthz`).catch(() => undefined))?.ok ?? false;
      if (!up) await sleep(250);
    }
    expect(up).toBe(true);
    const signup = await fetch(`${base}/api/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({
        organization_name: 'Drain Corp',
        name: 'Dee',
        email: EMAIL,
        password: PASSWORD,
      }),
    });
    expect(signup.status).toBe(201);

    let sent = 0;
    // A keep-alive client, as a load balancer is: the drain must not wait for its idle timeout.
    const agent = new Agent({ keepAlive: true });
    const response = slowLogin(port, agent, (n) => {
      sent = n;
    });
    // Awaited below; this only keeps a failure from also surfacing as an unhandled rejection.
    response.catch(() => {});
    while (sent < 2) await sleep(10);
    server.kill('SIGTERM');
    while (!output.includes('stopping: draining in-flight requests')) {
      if (server.exitCode !== null) throw new Error(`serve exited before draining: ${output}`);
      await sleep(10);
    }
    // The signal arrived mid-request, and from then on the port takes no new connection.
    expect(sent).toBeLessThan(CHUNKS);
    expect(await tryConnect(port)).toBe('ECONNREFUSED');

    const login = await response;
    expect(sent).toBe(CHUNKS);
    expect(login.status).toBe(200);
    const session = JSON.parse(login.body);
    expect(session.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(session.user).toMatchObject({ email: EMAIL });

    // The keep-alive client is told to close its connection instead of reusing it.
    expect(login.connection).toBe('close');
    const exit = await exited;
    agent.destroy();
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
    expect(exit.at).toBeGreaterThanOrEqual(login.endedAt);
    // Well under Node's 5 s keep-alive timeout, which an idle kept-alive connection would hold.
    expect(exit.at - login.endedAt).toBeLessThan(3000);
    // The drained request was logged as usual: one JSON line with its status.
    const loginLine = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === 'request' && line.path === '/api/v1/auth/login');
    expect(loginLine).toMatchObject({ method: 'POST', status: 200 });
    expect(output).toContain('"msg":"stopped"');
  });
});
