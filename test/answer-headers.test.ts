// Locks in that every answer carries the security headers, its request id and its RateLimit-*
// headers alike over a real socket (written on Node's response, http/answer-headers.ts) and in
// process (on the answer's Headers); that an answer's own security header wins either way, whatever
// made the answer (a handler, an error, a Response of its own); and that the security headers are
// exactly Hono's secureHeaders with the product's options.
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AppError } from '../core/errors.ts';
import { answerHeaders, SECURITY_HEADERS } from '../http/answer-headers.ts';
import type { AppEnv } from '../http/env.ts';
import { requestId } from '../http/request-log.ts';
import { serveInProcess } from './support/cli.ts';

/** Every header of a response but the ones that vary by transport (date, connection, length). */
function headersOf(res: Response): Record<string, string> {
  const skip = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!skip.has(name)) out[name] = value;
  });
  return out;
}

const OWN_POLICY = "default-src 'none'; sandbox";

/** The mechanism on its own: answers of every kind behind requestId and answerHeaders. */
function probeApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', requestId());
  app.use('*', answerHeaders());
  app.get('/json', (c) => c.json({ ok: true }));
  app.get('/own-policy', (c) => {
    c.header('Content-Security-Policy', OWN_POLICY);
    return c.text('page');
  });
  app.get('/response', () => new Response('raw', { headers: { 'x-frame-options': 'SAMEORIGIN' } }));
  app.get('/empty', (c) => c.body(null, 204));
  app.get('/fails', () => {
    throw new AppError('not_found', { message: 'Nothing here' });
  });
  app.onError((_err, c) => c.json({ error: 'Nothing here' }, 404));
  return app;
}

describe('the answer headers', () => {
  let base = '';
  let close = () => {};
  const app = probeApp();

  beforeAll(async () => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  test('are Hono secureHeaders with the product options', async () => {
    const hono = new Hono();
    hono.use(
      '*',
      secureHeaders({
        xFrameOptions: 'DENY',
        referrerPolicy: 'no-referrer',
        strictTransportSecurity: 'max-age=31536000; includeSubDomains',
        xContentTypeOptions: true,
        contentSecurityPolicy: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:'],
          fontSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          objectSrc: ["'none'"],
          baseUri: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
        },
      }),
    );
    hono.get('/', (c) => c.body(null, 204));
    const res = await hono.request('/');
    expect(Object.fromEntries(SECURITY_HEADERS)).toStrictEqual(headersOf(res));
  });

  test.each(['/json', '/own-policy', '/response', '/empty', '/fails'])(
    'are the same over a socket as in process on %s',
    async (path) => {
      const id = `probe-${path.slice(1)}`;
      const overSocket = await fetch(`${base}${path}`, { headers: { 'x-request-id': id } });
      const inProcess = await app.request(path, { headers: { 'x-request-id': id } });
      expect(overSocket.status).toBe(inProcess.status);
      expect(headersOf(overSocket)).toStrictEqual(headersOf(inProcess));
      expect(overSocket.headers.get('x-request-id')).toBe(id);
      expect(overSocket.headers.get('x-content-type-options')).toBe('nosniff');
      await overSocket.arrayBuffer();
    },
  );

  test("keep the answer's own security headers", async () => {
    for (const send of [(p: string) => fetch(`${base}${p}`), (p: string) => app.request(p)]) {
      const page = await send('/own-policy');
      expect(page.headers.get('content-security-policy')).toBe(OWN_POLICY);
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      const raw = await send('/response');
      expect(raw.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(raw.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      await Promise.all([page.arrayBuffer(), raw.arrayBuffer()]);
    }
  });

  test('carry the RateLimit-* headers of the product over a socket, as in process', async () => {
    const served = await serveInProcess();
    try {
      const overSocket = await fetch(`${served.base}/api/v1/me`);
      expect(overSocket.status).toBe(401);
      expect(overSocket.headers.get('ratelimit-limit')).toBe('300');
      expect(overSocket.headers.get('ratelimit-remaining')).toBe('299');
      expect(overSocket.headers.get('ratelimit-reset')).toMatch(/^\d+$/);
      expect(overSocket.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(overSocket.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      await overSocket.arrayBuffer();
    } finally {
      await served.stop();
    }
  });
});
