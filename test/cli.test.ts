// Locks in the `crm` command as a user runs it: help, migrate, tools list, admin commands, and serve with graceful stop.
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
  for (const name of ['DATABASE_URL', 'CRM_ADMIN_TOKEN', 'PORT', 'HOST', 'JWT_SECRET', 'REDIS_URL']) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function crm(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: cliEnv() }, (err, stdout, stderr) => {
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
    for (const command of ['serve', 'migrate', 'tools list', 'admin create-org', 'admin set-org']) {
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
