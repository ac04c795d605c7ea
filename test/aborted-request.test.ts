// Locks in a client that closes its connection in the middle of a request body: logged as an
// aborted request (warn, `aborted: true`, status 499 "client closed request"), never as an unhandled 500.
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { serve } from '@hono/node-server';
import { describe, expect } from 'vitest';
import { createLogger } from '../core/logger.ts';
import { fileTest } from './fixtures/index.ts';

const lines: Record<string, unknown>[] = [];
const logger = createLogger('info', {
  write(msg: string) {
    lines.push(JSON.parse(msg));
  },
});

// The file's context served on a real TCP port, since only a socket can close mid-body.
const test = fileTest({ options: { logger, withoutRateLimits: true } }).extend(
  'port',
  { scope: 'file' },
  async ({ t }, { onCleanup }) => {
    const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    return (address satisfies AddressInfo).port;
  },
);

/** Sends the head and half of a 200-byte JSON body, then closes the socket. */
function sendHalfAndClose(port: number, token: string, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 200\r\nX-Request-Id: aborted-1\r\n\r\n{"name":"Half',
      );
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 150);
    });
    socket.on('error', reject);
  });
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('a client that aborts mid-body', () => {
  test('is logged as an aborted request, not as an unhandled 500', async ({ org, port }) => {
    lines.length = 0;
    await sendHalfAndClose(port, org.token, '/api/v1/leads');
    await until(() => lines.some((l) => l.msg === 'request' && l.request_id === 'aborted-1'));
    const request = lines.find((l) => l.msg === 'request' && l.request_id === 'aborted-1');
    expect(request).toMatchObject({
      method: 'POST',
      path: '/api/v1/leads',
      status: 499,
      aborted: true,
      level: 40,
    });
    expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });
});
