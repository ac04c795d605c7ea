// Locks in the operator surface: /healthz and /readyz (database and Redis checks), secure response headers and CORS closed by default.
import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { loadConfig } from '../core/config.ts';
import { corsMiddleware } from '../http/browser.ts';
import { READY_CHECK_TIMEOUT_MS } from '../http/health.ts';
import { test } from './fixtures/file-test.ts';
import {
  createTestContext,
  json,
  onPostgres,
  TEST_DATABASE_URL,
  type TestContext,
  type TestOrg,
} from './helpers.ts';

/**
 * A minimal server speaking the Redis protocol (RESP) to the real ioredis client: it answers the
 * client's connection handshake (INFO, CLIENT) and, unless told to stall, PING. A stalled PING is
 * the failure a real Redis cannot be made to show on demand.
 */
async function startRespServer(options: {
  answerPing: boolean;
}): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (;;) {
        const parsed = nextCommand(buffered);
        if (!parsed) break;
        buffered = buffered.slice(parsed.consumed);
        const name = (parsed.args[0] ?? '').toUpperCase();
        if (name === 'PING') {
          if (options.answerPing) socket.write('+PONG\r\n');
        } else if (name === 'INFO') {
          const info = '# Server\r\nredis_version:7.2.0\r\nloading:0\r\n';
          socket.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`);
        } else {
          socket.write('+OK\r\n');
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One RESP command (an array of bulk strings) from the front of `text`, or null while incomplete. */
function nextCommand(text: string): { args: string[]; consumed: number } | null {
  const header = /^\*(\d+)\r\n/.exec(text);
  if (!header?.[1]) return null;
  let at = header[0].length;
  const args: string[] = [];
  for (let i = 0; i < Number(header[1]); i++) {
    const bulk = /^\$(\d+)\r\n/.exec(text.slice(at));
    if (!bulk?.[1]) return null;
    at += bulk[0].length;
    const length = Number(bulk[1]);
    if (text.length < at + length + 2) return null;
    args.push(text.slice(at, at + length));
    at += length + 2;
  }
  return { args, consumed: at };
}

async function untilRedisReady(ctx: TestContext): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (ctx.services.redis?.status === 'ready') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Redis never became ready (status ${ctx.services.redis?.status})`);
}

/** Makes the context's database unreachable: drops the PostgreSQL database, or closes PGlite. */
async function loseDatabase(ctx: TestContext): Promise<() => Promise<void>> {
  if (onPostgres && TEST_DATABASE_URL && ctx.config.databaseUrl) {
    const name = new URL(ctx.config.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
    return () => ctx.close();
  }
  await ctx.services.db.close();
  // PGlite refuses a second close: stop only what is left.
  return () => ctx.services.usage.stop();
}

describe('/healthz', () => {
  test('answers 200 {status: ok} without authentication, with a request id', async ({ t }) => {
    const res = await t.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
  });
});

// Each case builds its own app (a fresh database), which takes a while on a loaded machine.
describe('/readyz', { timeout: 120_000 }, () => {
  test('answers 200 ready with the database ok and Redis not configured', async ({ t }) => {
    const res = await t.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', database_pool: 'ok', redis: 'not_configured' },
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  test('answers 503 with database: error when the database is unreachable, and reveals no reason', async () => {
    const lost = await createTestContext();
    const cleanup = await loseDatabase(lost);
    try {
      const res = await lost.request('GET', '/readyz');
      expect(res.status).toBe(503);
      const body = await res.text();
      expect(JSON.parse(body)).toEqual({
        status: 'unavailable',
        checks: { database: 'error', database_pool: 'ok', redis: 'not_configured' },
      });
      // /healthz is liveness only: the process still serves.
      expect((await lost.request('GET', '/healthz')).status).toBe(200);
    } finally {
      await cleanup();
    }
  });

  test('answers 503 with redis: error when REDIS_URL points at nothing', async () => {
    const noRedis = await createTestContext({ REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const res = await noRedis.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        status: 'unavailable',
        checks: { database: 'ok', database_pool: 'ok', redis: 'error' },
      });
    } finally {
      await noRedis.close();
    }
  });

  test('answers 200 with redis: ok when Redis answers PING', async () => {
    // The services suite has a real Redis; the default suite a protocol-level stand-in.
    const stand = process.env.TEST_REDIS_URL ? undefined : await startRespServer({ answerPing: true });
    const redisUrl = process.env.TEST_REDIS_URL ?? stand?.url ?? '';
    const withRedis = await createTestContext({ REDIS_URL: redisUrl });
    try {
      await untilRedisReady(withRedis);
      const res = await withRedis.request('GET', '/readyz');
      expect(await res.json()).toEqual({
        status: 'ready',
        checks: { database: 'ok', database_pool: 'ok', redis: 'ok' },
      });
      expect(res.status).toBe(200);
    } finally {
      await withRedis.close();
      await stand?.close();
    }
  });

  test('answers 503 within its time limit when Redis accepts but never answers PING', async () => {
    const stalled = await startRespServer({ answerPing: false });
    const ctx = await createTestContext({ REDIS_URL: stalled.url });
    try {
      await untilRedisReady(ctx);
      const started = performance.now();
      const res = await ctx.request('GET', '/readyz');
      const elapsed = performance.now() - started;
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        status: 'unavailable',
        checks: { database: 'ok', database_pool: 'ok', redis: 'error' },
      });
      expect(elapsed).toBeGreaterThanOrEqual(READY_CHECK_TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(READY_CHECK_TIMEOUT_MS + 2000);
    } finally {
      await ctx.close();
      await stalled.close();
    }
  });
});

describe('secure headers', () => {
  test('are set on successes and on errors', async ({ t, org }) => {
    const responses = [
      await t.request('GET', '/api/v1/me', { token: org.token }),
      await t.request('GET', '/api/v1/me'),
      await t.request('GET', '/no/such/route'),
      await t.request('GET', '/healthz'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 401, 404, 200]);
    for (const res of responses) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('strict-transport-security')).toMatch(/^max-age=\d{7,}; includeSubDomains$/);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-eval');
      expect(res.headers.get('x-powered-by')).toBeNull();
    }
  });
});

const APP_ORIGIN = 'https://app.example.test';
const OTHER_ORIGIN = 'https://evil.example.test';

function preflight(ctx: TestContext, origin: string, path = '/api/v1/leads'): Promise<Response> {
  return ctx.request('OPTIONS', path, {
    headers: {
      origin,
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization,content-type,x-mcp-toolsets',
    },
  });
}

function corsHeaders(res: Response): string[] {
  const names: string[] = [];
  res.headers.forEach((_, name) => {
    if (name.startsWith('access-control-')) names.push(name);
  });
  return names;
}

describe('CORS closed by default', () => {
  test('sends no CORS header on a cross-origin request when CORS_ALLOWED_ORIGINS is empty', async ({
    t,
    org,
  }) => {
    const res = await t.request('GET', '/api/v1/me', { token: org.token, headers: { origin: APP_ORIGIN } });
    expect(res.status).toBe(200);
    expect(corsHeaders(res)).toEqual([]);
  });

  test('answers a preflight with no CORS header, before rate limits and authentication', async ({
    t,
    org,
  }) => {
    const res = await preflight(t, APP_ORIGIN);
    expect(res.status).toBe(204);
    expect(corsHeaders(res)).toEqual([]);
    // An /api/v1 request that reaches the rate limiter carries RateLimit-* headers; a preflight does not.
    const counted = await t.request('GET', '/api/v1/me', { token: org.token });
    expect(counted.headers.get('ratelimit-limit')).not.toBeNull();
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });
});

describe('CORS with CORS_ALLOWED_ORIGINS', () => {
  let c: TestContext;
  let corsOrg: TestOrg;
  beforeAll(async () => {
    c = await createTestContext({ CORS_ALLOWED_ORIGINS: `${APP_ORIGIN}, http://localhost:5173` });
    corsOrg = await c.createOrg();
  });
  afterAll(() => c.close());

  test('answers a listed origin’s preflight with the allowed methods and headers, no credentials mode', async () => {
    const res = await preflight(c, APP_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(res.headers.get('access-control-allow-methods')?.split(',')).toEqual(
      expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
    );
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',');
    expect(allowed).toEqual(
      expect.arrayContaining([
        'authorization',
        'content-type',
        'x-request-id',
        'x-mcp-toolsets',
        'idempotency-key',
      ]),
    );
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('vary')).toContain('Origin');
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });

  test('gives an unlisted origin’s preflight no Access-Control-Allow-Origin', async () => {
    const res = await preflight(c, OTHER_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(corsHeaders(res)).toEqual([]);
    expect(res.headers.get('vary')).toContain('Origin');
  });

  test('lets a listed origin read the response, the request id and the RateLimit headers', async () => {
    const res = await c.request('GET', '/api/v1/me', {
      token: corsOrg.token,
      headers: { origin: 'http://localhost:5173' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(',');
    expect(exposed).toEqual(
      expect.arrayContaining([
        'X-Request-Id',
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'Idempotent-Replayed',
      ]),
    );
    expect(res.headers.get('vary')).toContain('Origin');
  });

  test('gives an unlisted origin’s request no CORS header, and the same for errors', async () => {
    const ok = await c.request('GET', '/api/v1/me', {
      token: corsOrg.token,
      headers: { origin: OTHER_ORIGIN },
    });
    expect(ok.status).toBe(200);
    expect(corsHeaders(ok)).toEqual([]);
    expect(ok.headers.get('vary')).toContain('Origin');
    const denied = await c.request('GET', '/api/v1/me', { headers: { origin: APP_ORIGIN } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(await json(denied)).toMatchObject({ error: 'Authentication required' });
  });

  test('rejects a configuration that is not a list of exact origins', () => {
    for (const value of ['*', 'https://app.example.test/', 'app.example.test', 'ftp://files.example.test']) {
      expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: value })).toThrow(/CORS_ALLOWED_ORIGINS/);
    }
    expect(
      loadConfig({ CORS_ALLOWED_ORIGINS: ' https://a.example.test ,http://localhost:5173' })
        .corsAllowedOrigins,
    ).toEqual(['https://a.example.test', 'http://localhost:5173']);
    expect(loadConfig({}).corsAllowedOrigins).toEqual([]);
    expect(() => corsMiddleware({ corsAllowedOrigins: ['*'] })).toThrow(/exact origins/);
  });
});
