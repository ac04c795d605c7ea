// Locks in the `crm` command as a user runs it: help, migrate, tools list, admin commands, and serve with graceful stop.
// Commands run in-process (test/support/cli.ts); the installed bin runs as a child process where the
// process is the point: its exit status, and serve stopping on a signal.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  BIN,
  cliEnv,
  crm,
  crmProcess,
  exitOf,
  freePort,
  oneErrorLine,
  ROOT,
  useCliDataDir,
} from './support/cli.ts';

useCliDataDir({ migrated: true });

describe('crm', { timeout: 120_000 }, () => {
  it('--help lists the commands; every command has its own --help', async () => {
    const top = await crmProcess(['--help']);
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
    const unknown = await crmProcess(['frobnicate']);
    expect(unknown.code).not.toBe(0);
    expect(oneErrorLine(unknown)).toContain('frobnicate');
    const badOption = await crm(['tools', 'list', '--yaml']);
    expect(badOption.code).not.toBe(0);
    oneErrorLine(badOption);
  });

  it('serve --processes refuses what several processes cannot share, with one crm: line and exit 2', async () => {
    const embedded = await crm(['serve', '--processes', '2']);
    expect(embedded.code).toBe(2);
    expect(oneErrorLine(embedded)).toContain('needs DATABASE_URL');
    // The settings are checked before anything connects: the database need not exist.
    const noRedis = await crm(['serve'], {
      PROCESSES: '2',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    });
    expect(noRedis.code).toBe(2);
    expect(oneErrorLine(noRedis)).toContain('needs REDIS_URL');
    const zero = await crm(['serve', '--processes', '0']);
    expect(zero.code).toBe(2);
    expect(oneErrorLine(zero)).toContain('from 1 to 64');
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
      for (let attempt = 0; attempt < 1000 && !health; attempt++) {
        if (child.exitCode !== null) throw new Error(`serve exited early: ${output}`);
        health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (!health) await new Promise((r) => setTimeout(r, 50));
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
