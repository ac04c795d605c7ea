// Locks in that a request is authenticated once, at the HTTP root, whichever surface serves it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, vi } from 'vitest';
import { fileTest } from './fixtures/file-test.ts';
import { json, type TestContext } from './helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm;
const USER_AUTHENTICATION = 'core/auth/authenticate.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** The files (relative to the repository) a file's relative imports name. */
function filesImportedBy(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)]
    .map(([, target]) => target)
    .filter((target): target is string => target?.startsWith('.') === true)
    .map((target) => relative(ROOT, resolve(ROOT, file, '..', target)));
}

const test = fileTest({ plan: 'enterprise' })
  .extend('pat', { scope: 'file' }, async ({ t, org }) =>
    t.createPat(org.orgId, org.ownerId, ['contacts:read', 'mcp:read']),
  )
  .extend('spies', { scope: 'file' }, async ({ t }, { onCleanup }) => {
    const spies = {
      /** Every credential lookup (session, PAT, OAuth) goes through the cache once per authentication. */
      lookups: vi.spyOn(t.services.authCache, 'lookup'),
      /** A PAT's use is recorded for `last_used_at` once per authentication. */
      uses: vi.spyOn(t.services.usage, 'record'),
    };
    onCleanup(() => {
      spies.lookups.mockRestore();
      spies.uses.mockRestore();
    });
    return spies;
  })
  // Each test counts only its own calls: the spies are cleared once everything it names is built.
  .extend('lookups', async ({ spies, pat: _pat }) => spies.lookups.mockClear())
  .extend('uses', async ({ spies, pat: _pat }) => spies.uses.mockClear());

describe('where authentication lives', () => {
  test.each(['rest', 'mcp'])('no source file under %s/ imports core/auth/authenticate.ts', (dir) => {
    const files = sourceFiles(dir);
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((file) => filesImportedBy(file).includes(USER_AUTHENTICATION))).toEqual([]);
  });

  test('the HTTP root does, through http/authenticate.ts', () => {
    expect(filesImportedBy('http/authenticate.ts')).toContain(USER_AUTHENTICATION);
  });
});

const mcpCall = (t: TestContext, token: string) =>
  t.request('POST', '/mcp', {
    token,
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } },
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
  });

describe('one request, one authentication', () => {
  test('a REST tool route looks a PAT up once and records its use once', async ({
    t,
    pat,
    lookups,
    uses,
  }) => {
    const res = await t.request('GET', '/api/v1/me', { token: pat.token });
    expect(res.status).toBe(200);
    expect(lookups).toHaveBeenCalledTimes(1);
    expect(uses).toHaveBeenCalledTimes(1);
    expect(uses).toHaveBeenCalledWith('pat', pat.keyId, expect.any(Date));
  });

  test('a REST tool route looks a session up once', async ({ t, org, lookups }) => {
    const res = await t.request('GET', '/api/v1/me', { token: org.token });
    expect(res.status).toBe(200);
    expect(lookups).toHaveBeenCalledTimes(1);
  });

  test('an MCP tool call looks a PAT up once and records its use once', async ({
    t,
    org,
    pat,
    lookups,
    uses,
  }) => {
    const res = await mcpCall(t, pat.token);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(org.ownerId);
    expect(lookups).toHaveBeenCalledTimes(1);
    expect(uses).toHaveBeenCalledTimes(1);
  });

  test('a refused credential is looked up once too', async ({ t, lookups }) => {
    const res = await t.request('GET', '/api/v1/me', { token: `pat_${'0'.repeat(64)}` });
    expect(res.status).toBe(401);
    expect(lookups).toHaveBeenCalledTimes(1);
  });

  test('routes that take no user token, unknown paths and wrong methods look nothing up', async ({
    t,
    org,
    pat,
    lookups,
  }) => {
    const health = await t.request('GET', '/healthz', { token: pat.token });
    const login = await t.request('POST', '/api/v1/auth/login', {
      token: pat.token,
      body: { email: org.ownerEmail, password: 'correct horse battery' },
    });
    const unknown = await t.request('GET', '/api/v1/no-such-route', { token: pat.token });
    const wrongMethod = await t.request('PATCH', '/api/v1/me', { token: pat.token, body: {} });
    expect([health.status, login.status, unknown.status, wrongMethod.status]).toEqual([200, 200, 404, 405]);
    expect(await json(unknown)).toMatchObject({ code: 'route_not_found' });
    expect(lookups).not.toHaveBeenCalled();
  });
});
