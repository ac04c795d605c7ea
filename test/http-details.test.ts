// Locks in the HTTP and auth details of issue 9: 413 closes the connection cleanly, a wrong method
// is 405 with Allow, query-string tokens are never used, session JWTs must look like ours, an
// invalid MCP initialize is -32602 (a 2026-07-28 initialize, a removed method, is 404 -32601), and /mcp on loopback checks the Host header (DNS rebinding).
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { SignJWT } from 'jose';
import { describe, expect } from 'vitest';
import { SESSION_TTL_SECONDS } from '../core/auth/jwt.ts';
import { MAX_BODY_BYTES } from '../http/app.ts';
import { ROUTES } from '../tools/index.ts';
import { fileTest } from './fixtures/file-test.ts';
import { createTestContext, json, type TestContext, type TestOrg } from './helpers.ts';
import { serveMcp } from './mcp-clients.ts';

const test = fileTest({ options: { withoutRateLimits: true } })
  /** The file's app on a real TCP port, since only a socket shows how a connection is closed. */
  .extend('port', { scope: 'file' }, async ({ t }, { onCleanup }) => {
    const { url, stop } = await serveMcp(t);
    onCleanup(stop);
    return Number(url.port);
  })
  /** A second app listening on loopback only, with one more allowed MCP host. */
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; this one has none.
  .extend('local', { scope: 'file' }, async ({}, { onCleanup }) => {
    const local = await createTestContext(
      { HOST: '127.0.0.1', MCP_ALLOWED_HOSTS: 'crm.internal' },
      { withoutRateLimits: true },
    );
    onCleanup(() => local.close());
    return local;
  });

describe('413 on an oversized body', () => {
  /** Sends raw bytes on one kept-alive socket and collects everything until the server closes it. */
  function exchange(port: number, payload: Buffer): Promise<{ text: string; closedByServer: boolean }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => {
        socket.destroy();
        resolve({ text: Buffer.concat(chunks).toString('latin1'), closedByServer: false });
      }, 3000);
      socket.on('data', (d) => chunks.push(d));
      socket.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.on('end', () => {
        clearTimeout(timer);
        socket.end();
        resolve({ text: Buffer.concat(chunks).toString('latin1'), closedByServer: true });
      });
      socket.write(payload);
    });
  }

  test('answers 413 with Connection: close and closes; a fresh connection then works', async ({
    org,
    port,
  }) => {
    const body = Buffer.alloc(MAX_BODY_BYTES + 1024, 'a');
    const head = Buffer.from(
      'POST /api/v1/leads HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n' +
        `Authorization: Bearer ${org.token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n`,
    );
    // A second request pipelined behind the oversized body on the same connection.
    const next = Buffer.from('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const { text, closedByServer } = await exchange(port, Buffer.concat([head, body, next]));
    expect(text.startsWith('HTTP/1.1 413')).toBe(true);
    expect(text.toLowerCase()).toContain('connection: close');
    // The leftover body bytes were never parsed as a request: exactly one response, then close.
    expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 413']);
    expect(closedByServer).toBe(true);

    const fresh = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(fresh).toBe(200);
  });

  test('a chunked oversized body (no Content-Length) also answers 413 with Connection: close', async ({
    org,
    port,
  }) => {
    const chunk = Buffer.alloc(256 * 1024, 'a');
    const parts = [
      Buffer.from(
        'POST /api/v1/leads HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
          `Authorization: Bearer ${org.token}\r\nContent-Type: application/json\r\n` +
          'Transfer-Encoding: chunked\r\n\r\n',
      ),
    ];
    for (let i = 0; i < 5; i++)
      parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
    parts.push(Buffer.from('0\r\n\r\n'));
    const { text, closedByServer } = await exchange(port, Buffer.concat(parts));
    expect(text.startsWith('HTTP/1.1 413')).toBe(true);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(closedByServer).toBe(true);
  });
});

describe('405 on a wrong method', () => {
  const WRONG = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  /** A concrete path for a route pattern: every parameter filled with a valid-looking id. */
  const concrete = (path: string) => path.replace(/:[A-Za-z_]+/g, 'aaaaaaaaaaaaaaaaaaaaaaaa');

  test('answers every method a REST route does not serve with 405 and an Allow header naming those it does', async ({
    t,
    org,
  }) => {
    for (const route of ROUTES) {
      const path = `/api/v1${concrete(route.path)}`;
      for (const method of WRONG) {
        const served = ROUTES.some(
          (r) =>
            r.method === method &&
            new RegExp(`^${r.path.replace(/:[A-Za-z_]+/g, '[^/]+')}$`).test(concrete(route.path)),
        );
        if (served) continue;
        const res = await t.request(method, path, { token: org.token });
        expect(res.status, `${method} ${path}`).toBe(405);
        const allow = res.headers.get('allow')?.split(', ') ?? [];
        expect(allow, `${method} ${path}`).toContain(route.method);
        expect(allow).not.toContain(method);
        expect(await json(res)).toMatchObject({ error: 'Method not allowed', code: 'method_not_allowed' });
      }
    }
  });

  test('covers the auth and operational routes too, and leaves unknown paths 404', async ({ t, org }) => {
    const login = await t.request('GET', '/api/v1/auth/login');
    expect(login.status).toBe(405);
    expect(login.headers.get('allow')).toBe('POST');
    const health = await t.request('POST', '/healthz');
    expect(health.status).toBe(405);
    expect(health.headers.get('allow')).toBe('GET, HEAD');

    const unknown = await t.request('GET', '/api/v1/no-such-thing', { token: org.token });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('allow')).toBeNull();
    expect(await json(unknown)).toMatchObject({ code: 'route_not_found' });
  });
});

describe('tokens in the query string', () => {
  test.for(['access_token', 'token', 'api_key', 'apikey', 'key', 'bearer'])(
    'REST: ?%s=<valid token> alone is never used: 401 Authentication required',
    async (param, { t, org }) => {
      const res = await t.request('GET', `/api/v1/me?${param}=${encodeURIComponent(org.token)}`);
      expect(res.status).toBe(401);
      expect(await json(res)).toMatchObject({ error: 'Authentication required' });
    },
  );

  test('REST: with an Authorization header too, the header decides and the query token is ignored', async ({
    t,
    org,
  }) => {
    const ok = await t.request('GET', `/api/v1/leads?access_token=${encodeURIComponent(org.token)}`, {
      token: org.token,
    });
    expect(ok.status).toBe(200);
    const bad = await t.request('GET', `/api/v1/me?access_token=${encodeURIComponent(org.token)}`, {
      token: 'pat_'.padEnd(68, '0'),
    });
    expect(bad.status).toBe(401);
    expect(await json(bad)).toMatchObject({ error: 'Invalid or expired token' });
  });

  test('/mcp: ?access_token=<valid token> alone is never used: 401 Authentication required', async ({
    t,
    org,
  }) => {
    const res = await t.request('POST', `/mcp?access_token=${encodeURIComponent(org.token)}`, {
      body: { jsonrpc: '2.0', id: 1, method: 'ping' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(res.status).toBe(401);
    expect(await json(res)).toMatchObject({ error: 'Authentication required' });
  });
});

describe('session JWTs must look like ours', () => {
  const sign = (t: TestContext, org: TestOrg, claims: { iat?: number; exp?: number }) => {
    let jwt = new SignJWT({ org: org.orgId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(org.ownerId);
    if (claims.iat !== undefined) jwt = jwt.setIssuedAt(claims.iat);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    return jwt.sign(t.services.jwtKey);
  };
  const now = () => Math.floor(Date.now() / 1000);

  test.for<[string, () => { iat?: number; exp?: number }]>([
    ['without exp', () => ({ iat: now() })],
    ['without iat', () => ({ exp: now() + 60 })],
    [
      'living longer than the configured lifetime',
      () => ({ iat: now(), exp: now() + SESSION_TTL_SECONDS + 60 }),
    ],
    ['living for years', () => ({ iat: now() - 10, exp: now() + 10 * 365 * 24 * 3600 })],
    ['issued in the future', () => ({ iat: now() + 600, exp: now() + 600 + 60 })],
  ])('refuses a correctly signed token %s with 401', async ([_label, claims], { t, org }) => {
    const res = await t.request('GET', '/api/v1/me', { token: await sign(t, org, claims()) });
    expect(res.status).toBe(401);
  });

  test('accepts one shaped like ours, with a little clock skew', async ({ t, org }) => {
    expect(
      (
        await t.request('GET', '/api/v1/me', {
          token: await sign(t, org, { iat: now(), exp: now() + SESSION_TTL_SECONDS }),
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await t.request('GET', '/api/v1/me', {
          token: await sign(t, org, { iat: now() + 5, exp: now() + 65 }),
        })
      ).status,
    ).toBe(200);
  });
});

describe('MCP initialize with invalid params', () => {
  test.for<[string, Record<string, unknown> | undefined]>([
    [
      'protocolVersion of the wrong type',
      { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    ],
    ['clientInfo missing', { protocolVersion: '2025-06-18', capabilities: {} }],
    ['no params at all', undefined],
  ])('answers -32602 Invalid params with a short message (%s)', async ([_label, params], { t, org }) => {
    const res = await t.request('POST', '/mcp', {
      token: org.token,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 7, method: 'initialize', ...(params !== undefined && { params }) },
    });
    const text = await res.text();
    const answer = JSON.parse(text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null'));
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602 } });
    expect(answer.error.message).toMatch(/^Invalid params for initialize: /);
    expect(answer.error.message.length).toBeLessThan(300);
    expect(answer.error.message).not.toContain('"code"');
  });

  // 2026-07-28 removed initialize: the SDK answers it 404 -32601, and the 2025 check above must not
  // claim it (it used to answer 400 -32602, since such a request has no protocolVersion or clientInfo).
  const modernInitialize = (t: TestContext, org: TestOrg, headers: Record<string, string>) =>
    t.request('POST', '/mcp', {
      token: org.token,
      headers: { accept: 'application/json, text/event-stream', ...headers },
      body: {
        jsonrpc: '2.0',
        id: 8,
        method: 'initialize',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
    });

  test('leaves a 2026-07-28 initialize to the SDK: 404 and -32601 Method not found', async ({ t, org }) => {
    const res = await modernInitialize(t, org, {
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'initialize',
    });
    expect(res.status).toBe(404);
    expect(await json(res)).toMatchObject({ jsonrpc: '2.0', id: 8, error: { code: -32601 } });
  });

  test('leaves a 2026-07-28 initialize without its headers to the SDK too (-32020, not -32602)', async ({
    t,
    org,
  }) => {
    const res = await modernInitialize(t, org, {});
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ jsonrpc: '2.0', id: 8, error: { code: -32020 } });
  });
});

describe('Host header at /mcp on loopback (DNS rebinding)', () => {
  const ping = async (local: TestContext, host: string) => {
    const owner = await local.createOrg();
    return local.app.request(`http://${host}/mcp`, {
      method: 'POST',
      headers: {
        host,
        authorization: `Bearer ${owner.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
  };

  test.for(['localhost:3000', '127.0.0.1:3000', '[::1]:3000', 'localhost', 'crm.internal:8443'])(
    'accepts Host %s',
    async (host, { local }) => {
      expect((await ping(local, host)).status).toBe(200);
    },
  );

  test.for(['evil.example:3000', 'evil.example', '127.0.0.1.nip.io:3000', 'localhost.evil.example'])(
    'refuses Host %s with 403 in the error envelope',
    async (host, { local }) => {
      const res = await ping(local, host);
      expect(res.status).toBe(403);
      expect(await json(res)).toMatchObject({ code: 'forbidden', message: 'Host not allowed' });
    },
  );

  test('checks nothing when the server listens on all interfaces without a list', async ({ t, org }) => {
    const res = await t.app.request('http://evil.example/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${org.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(res.status).toBe(200);
  });
});
