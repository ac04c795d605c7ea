// Locks in that a request is authenticated once, at the HTTP root, whichever surface serves it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, type MockInstance, vi } from 'vitest';
import { createTestContext, json, type TestContext, type TestOrg } from './helpers.ts';

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

describe('where authentication lives', () => {
  it.each(['rest', 'mcp'])('no source file under %s/ imports core/auth/authenticate.ts', (dir) => {
    const files = sourceFiles(dir);
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((file) => filesImportedBy(file).includes(USER_AUTHENTICATION))).toEqual([]);
  });

  it('the HTTP root does, through http/authenticate.ts', () => {
    expect(filesImportedBy('http/authenticate.ts')).toContain(USER_AUTHENTICATION);
  });
});

let t: TestContext;
let org: TestOrg;
let pat: { token: string; keyId: string };
/** Every credential lookup (session, PAT, OAuth) goes through the cache once per authentication. */
let lookups: MockInstance;
/** A PAT's use is recorded for `last_used_at` once per authentication. */
let uses: MockInstance;

beforeAll(async () => {
  t = await createTestContext();
  org = await t.createOrg({ plan: 'enterprise' });
  pat = await t.createPat(org.orgId, org.ownerId, ['contacts:read', 'mcp:read']);
  lookups = vi.spyOn(t.services.authCache, 'lookup');
  uses = vi.spyOn(t.services.usage, 'record');
});
afterEach(() => {
  lookups.mockClear();
  uses.mockClear();
});
afterAll(async () => {
  lookups.mockRestore();
  uses.mockRestore();
  await t.close();
});

const mcpCall = (token: string) =>
  t.request('POST', '/mcp', {
    token,
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } },
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
  });

describe('one request, one authentication', () => {
  it('a REST tool route looks a PAT up once and records its use once', async () => {
    const res = await t.request('GET', '/api/v1/me', { token: pat.token });
    expect(res.status).toBe(200);
    expect(lookups).toHaveBeenCalledTimes(1);
    expect(uses).toHaveBeenCalledTimes(1);
    expect(uses).toHaveBeenCalledWith('pat', pat.keyId, expect.any(Date));
  });

  it('a REST tool route looks a session up once', async () => {
    const res = await t.request('GET', '/api/v1/me', { token: org.token });
    expect(res.status).toBe(200);
    expect(lookups).toHaveBeenCalledTimes(1);
  });

  it('an MCP tool call looks a PAT up once and records its use once', async () => {
    const res = await mcpCall(pat.token);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(org.ownerId);
    expect(lookups).toHaveBeenCalledTimes(1);
    expect(uses).toHaveBeenCalledTimes(1);
  });

  it('a refused credential is looked up once too', async () => {
    const res = await t.request('GET', '/api/v1/me', { token: `pat_${'0'.repeat(64)}` });
    expect(res.status).toBe(401);
    expect(lookups).toHaveBeenCalledTimes(1);
  });

  it('routes that take no user token, unknown paths and wrong methods look nothing up', async () => {
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
