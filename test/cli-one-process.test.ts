// Locks in one process per embedded database: a `crm admin` on the DATA_DIR of a running `crm serve`
// exits at once naming it (and writes nothing), `crm admin ... --url` changes the running server
// through its admin API (documented at /admin/v1/openapi.json), a lock left by a dead process is
// taken over; and `crm tools call get_invoice_pdf --out` writes the PDF instead of dumping it.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  crm,
  crmProcess,
  exitOf,
  oneErrorLine,
  startServe,
  stopServe,
  useCliDataDir,
} from './support/cli.ts';

useCliDataDir();

const ADMIN_TOKEN = 'admin-token-for-the-cli-test';

describe('one process per embedded database', { timeout: 180_000 }, () => {
  let serveDir: string;
  let server: { child: ChildProcess; base: string; output: () => string };
  let orgId: string;
  let ownerToken: string;

  beforeAll(async () => {
    serveDir = await mkdtemp(join(tmpdir(), 'crm-one-process-'));
    server = await startServe(serveDir, { CRM_ADMIN_TOKEN: ADMIN_TOKEN });
    const created = await fetch(`${server.base}/admin/v1/organizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({
        name: 'Locked Corp',
        plan: 'starter',
        owner: { name: 'Lou', email: 'lou@example.test', password: 'a long password' },
      }),
    });
    expect(created.status).toBe(201);
    orgId = (await created.json()).organization._id;
    const login = await fetch(`${server.base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'lou@example.test', password: 'a long password' }),
    });
    ownerToken = (await login.json()).token;
  }, 180_000);

  afterAll(() => stopServe(server, serveDir));

  const planOnServer = async () => {
    const res = await fetch(`${server.base}/admin/v1/organizations/${orgId}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    return (await res.json()).organization.plan;
  };

  it('crm admin set-org on the DATA_DIR of a running serve exits 1 naming its pid, and changes nothing', async () => {
    const run = await crm(['admin', 'set-org', orgId, '--plan', 'pro'], { DATA_DIR: serveDir });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const line = oneErrorLine(run);
    expect(line).toContain(`is in use by pid ${server.child.pid} (crm serve, started `);
    expect(line).toContain('--url');
    expect(await planOnServer()).toBe('starter');
    const migrate = await crm(['migrate'], { DATA_DIR: serveDir });
    expect(migrate.code).toBe(1);
    expect(oneErrorLine(migrate)).toContain(`pid ${server.child.pid}`);
  });

  it('crm admin set-org --url goes through the admin API: the running server sees the change', async () => {
    const run = await crm(['admin', 'set-org', orgId, '--plan', 'pro', '--url', server.base, '--json'], {
      CRM_ADMIN_TOKEN: ADMIN_TOKEN,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ organization: { _id: orgId, plan: 'pro' } });
    expect(await planOnServer()).toBe('pro');

    const created = await crm(
      [
        'admin',
        'create-org',
        '--name',
        'Remote Org',
        '--plan',
        'free',
        '--owner-name',
        'Rae',
        '--owner-email',
        'rae@example.test',
        '--owner-password',
        'a long password',
        '--url',
        server.base,
      ],
      { CRM_ADMIN_TOKEN: ADMIN_TOKEN },
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Organization [0-9a-f]{24} "Remote Org" created on plan free/);

    const wrongToken = await crm(['admin', 'set-org', orgId, '--plan', 'free', '--url', server.base], {
      CRM_ADMIN_TOKEN: 'not-the-admin-token-at-all',
    });
    expect(wrongToken.code).toBe(1);
    expect(oneErrorLine(wrongToken)).toContain('401');
    const noToken = await crm(['admin', 'set-org', orgId, '--plan', 'free', '--url', server.base]);
    expect(noToken.code).toBe(2);
    expect(oneErrorLine(noToken)).toContain('CRM_ADMIN_TOKEN');
  });

  it('the admin API documents itself at /admin/v1/openapi.json (behind the admin token)', async () => {
    const res = await fetch(`${server.base}/admin/v1/openapi.json`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/admin/v1/organizations', '/admin/v1/organizations/{id}']),
    );
    expect(
      doc.paths['/admin/v1/organizations/{id}'].patch.requestBody.content['application/json'].schema,
    ).toMatchObject({ properties: { plan: expect.anything(), status: expect.anything() } });
    const anonymous = await fetch(`${server.base}/admin/v1/openapi.json`);
    expect(anonymous.status).toBe(401);
  });

  it('tools call get_invoice_pdf --out writes the PDF; without --out on a pipe the bytes go to stdout', async () => {
    const call = (name: string, input: unknown, extra: string[] = []) =>
      crm(['tools', 'call', name, '--input', JSON.stringify(input), '--url', server.base, ...extra], {
        CRM_TOKEN: ownerToken,
      });
    const lead = JSON.parse((await call('create_lead', { name: 'PDF Lead' })).stdout);
    const invoice = JSON.parse(
      (
        await call('create_invoice', {
          lead_id: lead.lead._id,
          currency: 'USD',
          line_items: [{ description: 'Work', quantity: 1, unit_price: 10 }],
        })
      ).stdout,
    );
    const out = join(serveDir, 'invoice.pdf');
    const run = await call('get_invoice_pdf', { id: invoice.invoice._id }, ['--out', out]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Wrote .*invoice\.pdf \(application\/pdf, \d+ bytes/);
    expect((await readFile(out)).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const piped = await call('get_invoice_pdf', { id: invoice.invoice._id });
    expect(piped.code).toBe(0);
    expect(piped.stdout.startsWith('%PDF-')).toBe(true);
  });
});

describe('a lock left by a process that died', { timeout: 120_000 }, () => {
  it('is taken over: crm migrate runs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crm-stale-lock-'));
    try {
      const gone = spawn(process.execPath, ['-e', '']);
      await exitOf(gone);
      await writeFile(
        join(dir, 'crm.pid'),
        JSON.stringify({ pid: gone.pid, command: 'crm serve', started_at: '2026-01-01T00:00:00.000Z' }),
      );
      // A child process on a fresh directory: the real bin migrating a new database from nothing.
      const run = await crmProcess(['migrate'], { DATA_DIR: dir });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
