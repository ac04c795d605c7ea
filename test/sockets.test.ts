// Locks in the areas' WebSockets on the HTTP server (core/sockets.ts, rest/public-sockets.ts): a path
// no route declares is 404, a route's refusal is its status with the API's error body, an accepted
// connection gets its text frames one at a time in order, a binary frame closes it with 1003 and a
// failing handler with 1011, the per-IP limit of public pages counts each upgrade, and closing the
// sockets tells every client to go away (1001).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { describe, expect } from 'vitest';
import { WebSocket } from 'ws';
import type { SocketRoute } from '../core/sockets.ts';
import { attachPublicSockets, type PublicSockets } from '../rest/public-sockets.ts';
import { fileTest } from './fixtures/file-test.ts';
import type { TestContext } from './fixtures/index.ts';

/** Echoes each frame after a delay that shrinks frame by frame, so only ordered handling keeps order. */
const echo: SocketRoute = {
  path: '/sockets/echo/:name',
  async open(request) {
    if (request.headers['x-secret'] !== 'open sesame') return { refuse: 403, reason: 'Bad handshake' };
    let delay = 30;
    return {
      accept: (connection) => ({
        async message(text) {
          if (text === 'fail') throw new Error('handler failed');
          delay = Math.max(0, delay - 10);
          await new Promise((resolve) => setTimeout(resolve, delay));
          connection.send(`${request.params.name}:${text}`);
        },
      }),
    };
  },
};

interface Harness {
  url: string;
  sockets: PublicSockets;
}

async function serveSockets(t: TestContext): Promise<Harness & { close(): Promise<void> }> {
  const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const sockets = attachPublicSockets(server, t.services, [echo]);
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    sockets,
    async close() {
      await sockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const test = fileTest().extend('harness', { scope: 'file' }, async ({ t }, { onCleanup }) => {
  const harness = await serveSockets(t);
  onCleanup(() => harness.close());
  return harness;
});

/** The status an upgrade is refused with, and the body, or "open". */
function handshake(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string } | 'open'> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('error', reject);
  });
}

function connect(url: string): Promise<{ ws: WebSocket; frames: string[]; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { 'x-secret': 'open sesame' } });
    const frames: string[] = [];
    ws.on('message', (data) => frames.push(String(data)));
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    ws.on('open', () => resolve({ ws, frames, closed }));
    ws.on('error', reject);
  });
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('WebSockets declared by areas', () => {
  test('answers 404 for a path no route declares, and the route’s own refusal with its status', async ({
    harness,
  }) => {
    expect(await handshake(`${harness.url}/sockets/nothing`)).toEqual({
      status: 404,
      body: '{"error":"Not found"}',
    });
    expect(await handshake(`${harness.url}/sockets/echo/a/b`)).toMatchObject({ status: 404 });
    expect(await handshake(`${harness.url}/sockets/echo/ann`)).toEqual({
      status: 403,
      body: '{"error":"Bad handshake"}',
    });
    expect(await handshake(`${harness.url}/sockets/echo/ann`, { 'x-secret': 'open sesame' })).toBe('open');
  });

  test('hands text frames to the area one at a time, in order, with the path parameters', async ({
    harness,
  }) => {
    const { ws, frames } = await connect(`${harness.url}/sockets/echo/ann`);
    for (const text of ['one', 'two', 'three']) ws.send(text);
    await until(() => frames.length === 3);
    expect(frames).toEqual(['ann:one', 'ann:two', 'ann:three']);
    ws.close();
  });

  test('closes on a binary frame (1003) and on a failing handler (1011)', async ({ harness }) => {
    const binary = await connect(`${harness.url}/sockets/echo/bin`);
    binary.ws.send(Buffer.from([1, 2, 3]));
    expect(await binary.closed).toBe(1003);
    const failing = await connect(`${harness.url}/sockets/echo/err`);
    failing.ws.send('fail');
    expect(await failing.closed).toBe(1011);
  });

  test('tells open clients to go away when the sockets close', async ({ t }) => {
    const own = await serveSockets(t);
    const { closed } = await connect(`${own.url}/sockets/echo/bye`);
    await own.close();
    expect(await closed).toBe(1001);
  });
});

// A context of its own, so the upgrades above have not spent this IP's budget.
const limited = fileTest().extend('harness', { scope: 'file' }, async ({ t }, { onCleanup }) => {
  const harness = await serveSockets(t);
  onCleanup(() => harness.close());
  return harness;
});

limited(
  'counts each upgrade against the per-IP limit of public pages and hooks (60 a minute)',
  async ({ harness }) => {
    const answers: Array<Awaited<ReturnType<typeof handshake>>> = [];
    for (let i = 0; i < 61; i++) answers.push(await handshake(`${harness.url}/sockets/echo/x`));
    expect(answers.slice(0, 60).every((a) => a !== 'open' && a.status === 403)).toBe(true);
    expect(answers[60]).toMatchObject({ status: 429 });
  },
);
