// Locks in the `crm` command as a user runs it: help, migrate, tools list, admin commands, serve with graceful stop, and tools call / keys create against a running server.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'cli', 'bin.js');

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'crm-cli-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** The environment of a fresh operator shell: embedded database in the temp dir, nothing else set. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extra };
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

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function crm(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: cliEnv(env) }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

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

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

function oneErrorLine(run: Run): string {
  const lines = run.stderr.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^crm: \S/);
  return lines[0] ?? '';
}

describe('crm', { timeout: 120_000 }, () => {
  it('--help lists the commands; every command has its own --help', async () => {
    const top = await crm(['--help']);
    expect(top.code).toBe(0);
    const commands = [
      'serve',
      'migrate',
      'tools list',
      'tools call',
      'keys create',
      'admin create-org',
      'admin set-org',
    ];
    for (const command of commands) {
      expect(top.stdout).toContain(command);
    }
    const sub = await crm(['admin', 'create-org', '--help']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('--owner-email');
  });

  it('an unknown command or option fails with one crm: line', async () => {
    const unknown = await crm(['frobnicate']);
    expect(unknown.code).not.toBe(0);
    expect(oneErrorLine(unknown)).toContain('frobnicate');
    const badOption = await crm(['tools', 'list', '--yaml']);
    expect(badOption.code).not.toBe(0);
    oneErrorLine(badOption);
  });

  it('migrate applies the migrations to the embedded database and exits 0', async () => {
    const run = await crm(['migrate']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Migrations applied');
  });

  it('tools list --json prints the registry with access and annotations', async () => {
    const run = await crm(['tools', 'list', '--json']);
    expect(run.code).toBe(0);
    const tools: { name: string; access: { kind: string }; annotations: { readOnlyHint: boolean } }[] =
      JSON.parse(run.stdout);
    const getMe = tools.find((tool) => tool.name === 'get_me');
    expect(getMe).toMatchObject({
      access: { kind: 'read' },
      annotations: { readOnlyHint: true },
      toolset: 'core',
    });
    expect(getMe).toHaveProperty('description');
    const table = await crm(['tools', 'list']);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+KIND\s+PERMISSION\s+SCOPE\s+FEATURE$/);
    expect(table.stdout).toMatch(/^get_me\s+read\s/m);
  });

  it('admin create-org, then set-org changes the plan; an invalid plan fails with one crm: line', async () => {
    const created = await crm([
      'admin',
      'create-org',
      '--name',
      'CLI Corp',
      '--plan',
      'starter',
      '--owner-name',
      'Cleo',
      '--owner-email',
      'cleo@example.test',
      '--owner-password',
      'a long password',
      '--json',
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const out: { organization: { _id: string; plan: string }; user: { role: string } } = JSON.parse(
      created.stdout,
    );
    expect(out.organization.plan).toBe('starter');
    expect(out.user.role).toBe('owner');

    const changed = await crm(['admin', 'set-org', out.organization._id, '--plan', 'pro', '--json']);
    expect(changed.code).toBe(0);
    expect(JSON.parse(changed.stdout)).toMatchObject({
      organization: { _id: out.organization._id, plan: 'pro' },
    });

    const invalid = await crm(['admin', 'set-org', out.organization._id, '--plan', 'platinum']);
    expect(invalid.code).not.toBe(0);
    expect(invalid.stdout).toBe('');
    expect(oneErrorLine(invalid)).toContain('--plan');

    const duplicate = await crm([
      'admin',
      'create-org',
      '--name',
      'Again',
      '--plan',
      'free',
      '--owner-name',
      'Cleo',
      '--owner-email',
      'cleo@example.test',
      '--owner-password',
      'a long password',
    ]);
    expect(duplicate.code).not.toBe(0);
    expect(oneErrorLine(duplicate)).toContain('already exists');
  });

  it('admin create-oauth-token prints a 64-hex token once', async () => {
    const created = await crm([
      'admin',
      'create-org',
      '--name',
      'Token Corp',
      '--plan',
      'free',
      '--owner-name',
      'Tia',
      '--owner-email',
      'tia@example.test',
      '--owner-password',
      'a long password',
      '--json',
    ]);
    const { user } = JSON.parse(created.stdout);
    const run = await crm([
      'admin',
      'create-oauth-token',
      '--user-id',
      user._id,
      '--app-name',
      'Sync',
      '--scopes',
      'read:leads,mcp:read',
      '--json',
    ]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.token).toMatch(/^[0-9a-f]{64}$/);
    expect(out.oauth_token).toMatchObject({ app_name: 'Sync', scopes: ['read:leads', 'mcp:read'] });
  });

  it('serve answers /healthz and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: ROOT,
      env: cliEnv({ PORT: String(port), HOST: '127.0.0.1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = exitOf(child);
    try {
      let health: Response | undefined;
      for (let attempt = 0; attempt < 200 && !health; attempt++) {
        if (child.exitCode !== null) throw new Error(`serve exited early: ${output}`);
        health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (!health) await new Promise((r) => setTimeout(r, 250));
      }
      expect(health?.status).toBe(200);
      expect(await health?.json()).toEqual({ status: 'ok' });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toEqual({ code: 0, signal: null });
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });
});

/** Starts `crm serve` on a free port with its own data directory; resolves once /healthz answers. */
async function startServe(dir: string): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: cliEnv({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir }),
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

describe('crm tools call and keys create against a running server', { timeout: 120_000 }, () => {
  let serveDir: string;
  let server: { child: ChildProcess; base: string; output: () => string };
  let session: string;
  let pat: string;

  beforeAll(async () => {
    serveDir = await mkdtemp(join(tmpdir(), 'crm-cli-serve-'));
    server = await startServe(serveDir);
    const signup = await fetch(`${server.base}/api/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        organization_name: 'Remote Corp',
        name: 'Rémi',
        email: 'remi@example.test',
        password: 'a long password',
      }),
    });
    expect(signup.status).toBe(201);
    session = (await signup.json()).token;
  }, 180_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      const exited = exitOf(server.child);
      server.child.kill('SIGTERM');
      await exited;
    }
    await rm(serveDir, { recursive: true, force: true });
  });

  it('keys create prints the key record and its token once; --json prints {key, plain_token}', async () => {
    const run = await crm([
      'keys',
      'create',
      '--label',
      'cli key',
      '--scopes',
      'read:leads,write:leads',
      '--url',
      server.base,
      '--token',
      session,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /^API key [0-9a-f]{24} "cli key" \(pat_[0-9a-f]{4}…\), scopes read:leads,write:leads$/,
    );
    expect(lines[1]).toMatch(/^pat_[0-9a-f]{64}$/);
    pat = lines[1] ?? '';

    const json = await crm(['keys', 'create', '--label', 'cli key 2', '--json'], {
      CRM_URL: server.base,
      CRM_TOKEN: session,
    });
    expect(json.code).toBe(0);
    const created = JSON.parse(json.stdout);
    expect(created.plain_token).toMatch(/^pat_[0-9a-f]{64}$/);
    expect(created.key).toMatchObject({ label: 'cli key 2' });
    expect(created.key.scopes).toContain('read:leads');
    expect(created.key).not.toHaveProperty('token_hash');
  });

  it('tools call creates, reads and lists through the REST routes and prints the JSON response', async () => {
    const env = { CRM_URL: server.base, CRM_TOKEN: pat };
    const created = await crm(
      ['tools', 'call', 'create_lead', '--input', '{"name":"CLI Lead","industry":"cli"}'],
      env,
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const { lead } = JSON.parse(created.stdout);
    expect(lead).toMatchObject({ name: 'CLI Lead', industry: 'cli' });
    expect(created.stdout).toContain('\n  "lead": {');

    // The id goes into the path (/leads/:id), given by flags rather than the environment.
    const fetched = await crm([
      'tools',
      'call',
      'get_lead',
      '--input',
      JSON.stringify({ id: lead._id }),
      '--url',
      server.base,
      '--token',
      pat,
    ]);
    expect(fetched.code).toBe(0);
    expect(JSON.parse(fetched.stdout).lead).toMatchObject({ _id: lead._id, name: 'CLI Lead' });

    await crm(['tools', 'call', 'create_lead', '--input', '{"name":"Other Lead"}'], env);
    // GET input travels as the query string: limit 1 of 2 leads.
    const listed = await crm(['tools', 'call', 'list_leads', '--input', '{"limit":1,"page":2}'], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ total: 2, page: 2, limit: 1, totalPages: 2 });

    const deleted = await crm(
      ['tools', 'call', 'delete_lead', '--input', JSON.stringify({ id: lead._id })],
      env,
    );
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toHaveProperty('message');
  });

  it('prints one crm: <status> line and exits 1 on an HTTP error', async () => {
    const env = { CRM_URL: server.base, CRM_TOKEN: pat };
    const missing = await crm(
      ['tools', 'call', 'get_lead', '--input', '{"id":"0123456789abcdef01234567"}'],
      env,
    );
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(oneErrorLine(missing)).toMatch(/^crm: 404 Not found\b/);

    const invalid = await crm(['tools', 'call', 'create_lead', '--input', '{"name":""}'], env);
    expect(invalid.code).toBe(1);
    expect(oneErrorLine(invalid)).toMatch(/^crm: 400 Validation failed.*\[name: .+\]$/);

    const anonymous = await crm(['tools', 'call', 'get_me', '--url', server.base]);
    expect(anonymous.code).toBe(1);
    expect(oneErrorLine(anonymous)).toMatch(/^crm: 401 Authentication required/);

    const scoped = await crm(['keys', 'create', '--label', 'wider', '--scopes', 'write:users'], env);
    expect(scoped.code).toBe(1);
    expect(oneErrorLine(scoped)).toMatch(/^crm: 403 /);

    const closedPort = await freePort();
    const unreachable = await crm(['tools', 'call', 'get_me', '--url', `http://127.0.0.1:${closedPort}`]);
    expect(unreachable.code).toBe(1);
    expect(oneErrorLine(unreachable)).toContain(`cannot reach http://127.0.0.1:${closedPort}`);
  });

  it('exits 2 with one line for an unknown tool, bad --input, a missing path parameter or --label', async () => {
    const env = { CRM_URL: server.base, CRM_TOKEN: pat };
    const cases: [string[], RegExp][] = [
      [['tools', 'call', 'frobnicate_leads'], /unknown tool "frobnicate_leads"/],
      [['tools', 'call', 'create_lead', '--input', '{"name":'], /--input is not valid JSON/],
      [['tools', 'call', 'create_lead', '--input', '["name"]'], /--input must be a JSON object/],
      [['tools', 'call', 'get_lead', '--input', '{}'], /--input needs "id"/],
      [['tools', 'call'], /exactly one tool name/],
      [['keys', 'create'], /--label/],
      [['tools', 'call', 'get_me', '--url', 'localhost:3000'], /--url must be an http\(s\) URL/],
    ];
    for (const [args, message] of cases) {
      const run = await crm(args, env);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stdout).toBe('');
      expect(oneErrorLine(run)).toMatch(message);
    }
  });

  it('tools call --help and keys create --help explain the options', async () => {
    const call = await crm(['tools', 'call', '--help']);
    expect(call.code).toBe(0);
    for (const flag of ['--input', '--url', '--token', 'CRM_URL', 'CRM_TOKEN'])
      expect(call.stdout).toContain(flag);
    const keys = await crm(['keys', 'create', '--help']);
    expect(keys.code).toBe(0);
    for (const flag of ['--label', '--scopes', '--url', '--token']) expect(keys.stdout).toContain(flag);
  });
});
