// Locks in the logs: one JSON line per request (method, path without query, status, duration_ms, request_id) and no token, password or secret in any log line.
import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { createLogger } from '../core/logger.ts';
import { fileTest } from './fixtures/file-test.ts';
import { json } from './helpers.ts';

const lines: string[] = [];

interface RequestLine {
  level: number;
  msg: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  request_id: string;
}

function isRequestLine(value: unknown): value is RequestLine {
  return typeof value === 'object' && value !== null && 'msg' in value && value.msg === 'request';
}

function requestLines(): RequestLine[] {
  return lines.map((line) => JSON.parse(line)).filter(isRequestLine);
}

// The most verbose level, so a secret logged at any level is caught.
const logger = createLogger('trace', {
  write(msg: string) {
    lines.push(msg);
  },
});
const test = fileTest({ options: { logger } });

describe('the request log', () => {
  test('writes one line per request with method, path, status, duration_ms and the echoed request id', async ({
    t,
    org,
  }) => {
    lines.length = 0;
    const res = await t.request('GET', '/api/v1/leads?page=1&limit=5', {
      token: org.token,
      headers: { 'x-request-id': 'req-log-1' },
    });
    expect(res.status).toBe(200);
    const missing = await t.request('DELETE', '/no/such/route');
    expect(missing.status).toBe(404);

    const logged = requestLines();
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({
      method: 'GET',
      path: '/api/v1/leads',
      status: 200,
      request_id: 'req-log-1',
    });
    expect(logged[0]?.duration_ms).toBeTypeOf('number');
    expect(logged[0]?.duration_ms).toBeGreaterThanOrEqual(0);
    expect(logged[1]).toMatchObject({
      method: 'DELETE',
      path: '/no/such/route',
      status: 404,
      request_id: missing.headers.get('x-request-id'),
    });
  });

  test('holds exactly those fields: never the query string, the headers or the body', async ({ t, org }) => {
    lines.length = 0;
    await t.request('POST', '/api/v1/leads?page=2', {
      token: org.token,
      body: { name: 'Logged Lead Body Marker' },
      headers: { 'user-agent': 'log-test-agent' },
    });
    const [line] = requestLines();
    expect(Object.keys(line ?? {}).sort()).toEqual(
      [
        'duration_ms',
        'hostname',
        'level',
        'method',
        'msg',
        'path',
        'pid',
        'request_id',
        'status',
        'time',
      ].sort(),
    );
    expect(line?.path).toBe('/api/v1/leads');
    const text = lines.join('');
    expect(text).not.toContain('page=2');
    expect(text).not.toContain('log-test-agent');
    expect(text).not.toContain('Logged Lead Body Marker');
  });
});

describe('secrets never reach the logs', () => {
  test('leaves out PATs, passwords, session and refresh tokens and tokens in query strings', async ({
    t,
    org,
  }) => {
    lines.length = 0;
    const secrets: string[] = [];
    const keep = (secret: string) => {
      secrets.push(secret);
      return secret;
    };

    // A personal access token in the Authorization header: valid, on REST and MCP, and an unknown one.
    const owner = await t.createUser(org.orgId, 'admin');
    const pat = await t.createPat(org.orgId, owner.userId, ['read:leads', 'mcp:read']);
    keep(pat.token);
    keep(pat.token.slice(4));
    expect((await t.request('GET', '/api/v1/me', { token: pat.token })).status).toBe(200);
    const mcp = await t.request('POST', '/mcp', {
      token: pat.token,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    });
    expect(mcp.status).toBeLessThan(500);
    const unknownPat = keep(`pat_${randomBytes(32).toString('hex')}`);
    expect((await t.request('GET', '/api/v1/leads', { token: unknownPat })).status).toBe(401);

    // A password in a signup body (accepted, then refused as a duplicate) and a wrong one at login.
    const password = keep(`signup-Secret-${randomBytes(6).toString('hex')}`);
    const email = `logging-${randomBytes(4).toString('hex')}@example.test`;
    const signup = await t.request('POST', '/api/v1/auth/signup', {
      body: { organization_name: 'Log Corp', name: 'Lou', email, password },
    });
    expect(signup.status).toBe(201);
    const session = await json<{ token: string; refresh_token: string }>(signup);
    keep(session.token);
    keep(session.refresh_token);
    const again = await t.request('POST', '/api/v1/auth/signup', {
      body: { organization_name: 'Log Corp', name: 'Lou', email, password },
    });
    expect(again.status).toBeGreaterThanOrEqual(400);
    const wrong = keep(`wrong-Secret-${randomBytes(6).toString('hex')}`);
    expect((await t.request('POST', '/api/v1/auth/login', { body: { email, password: wrong } })).status).toBe(
      401,
    );
    const refreshed = await t.request('POST', '/api/v1/auth/refresh', {
      body: { refresh_token: session.refresh_token },
    });
    expect(refreshed.status).toBe(200);
    keep((await json<{ refresh_token: string }>(refreshed)).refresh_token);

    // Tokens in query strings: never used (401 without a header), and never logged.
    const queryToken = keep(`qs-Secret-${randomBytes(6).toString('hex')}`);
    expect((await t.request('GET', `/api/v1/leads?access_token=${queryToken}`)).status).toBe(401);
    expect((await t.request('GET', `/healthz?token=${queryToken}`)).status).toBe(200);

    const text = lines.join('');
    expect(requestLines().length).toBeGreaterThanOrEqual(9);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toContain('access_token');
  });
});
