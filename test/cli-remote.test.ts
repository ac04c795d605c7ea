// Locks in `crm tools call` and `crm keys create` as a user runs them against a running server: the
// app served in this process on a free port, the commands run in-process (test/support/cli.ts); that
// `crm serve` itself serves is tested in test/cli.test.ts and test/cli-one-process.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crm, freePort, oneErrorLine, serveInProcess, useCliDataDir } from './support/cli.ts';

useCliDataDir();

describe('crm tools call and keys create against a running server', { timeout: 120_000 }, () => {
  let server: { base: string; stop: () => Promise<void> };
  let session: string;
  let pat: string;

  beforeAll(async () => {
    server = await serveInProcess();
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

  afterAll(() => server?.stop());

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

  it('keys create stores a misspelt scope and warns about it on stderr', async () => {
    const run = await crm(
      ['keys', 'create', '--label', 'cli typo', '--scopes', 'read:leads,raed:leads', '--json'],
      { CRM_URL: server.base, CRM_TOKEN: session },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).key.scopes).toEqual(['read:leads', 'raed:leads']);
    expect(run.stderr).toMatch(/^crm: warning: unknown scope "raed:leads" grants nothing\n$/);
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
