// The areas' WebSockets (core/sockets.ts) on the HTTP server, with the `ws` library: an upgrade
// request is matched against SOCKET_ROUTES, counted against the per-IP limit of public pages and
// hooks (60 a minute), and handed to the route's `open`, which accepts it or refuses it with a
// status. An accepted connection's text frames reach the area one at a time, in order; a binary frame
// is refused (1003) and an error in the area's handler closes the connection (1011) and is logged.
// Every other upgrade is answered 404 and its socket closed, as before sockets existed.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { clientIp } from '../core/client-ip.ts';
import type { Services } from '../core/services.ts';
import {
  matchSocketPath,
  type SocketConnection,
  type SocketHandlers,
  type SocketRoute,
} from '../core/sockets.ts';
import { SOCKET_ROUTES } from '../tools/index.ts';

/** The largest frame a socket accepts: JSON messages of a conversation, never files. */
const MAX_FRAME_BYTES = 64 * 1024;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Answers an upgrade with a plain HTTP error in the API's envelope and closes the socket. */
function refuseUpgrade(
  socket: Duplex,
  status: number,
  error: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ error });
  const lines = [
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

function headersOf(req: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers))
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

export interface PublicSockets {
  /** Closes every open socket (1001, going away) and stops answering upgrades. */
  close(): Promise<void>;
}

/** Answers WebSocket upgrades on `server` with the areas' socket routes (`routes`, for tests). */
export function attachPublicSockets(
  server: Server,
  services: Services,
  routes: readonly SocketRoute[] = SOCKET_ROUTES,
): PublicSockets {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://socket.invalid');
    const matched = routes
      .map((route) => ({ route, params: matchSocketPath(route.path, url.pathname) }))
      .find((candidate) => candidate.params !== null);
    if (!matched?.params) return refuseUpgrade(socket, 404, 'Not found');
    const { route, params } = matched;
    const ip = clientIp(
      req.socket.remoteAddress,
      headersOf(req)['x-forwarded-for'],
      services.config.trustProxyHops,
    );
    if (services.rateLimits) {
      const outcome = await services.rateLimits.consume('ingest', `ip:${ip}`);
      if (!outcome.allowed)
        return refuseUpgrade(socket, 429, outcome.message, { 'Retry-After': String(outcome.resetSeconds) });
    }
    const requestId = randomUUID();
    const answer = await route.open(
      { pathWithQuery: `${url.pathname}${url.search}`, params, headers: headersOf(req), ip, requestId },
      services,
    );
    if ('refuse' in answer) return refuseUpgrade(socket, answer.refuse, answer.reason);
    wss.handleUpgrade(req, socket, head, (ws) =>
      serve(ws, answer.accept(connectionOf(ws)), route, requestId),
    );
  }

  function serve(ws: WebSocket, handlers: SocketHandlers, route: SocketRoute, requestId: string): void {
    // One frame at a time, in arrival order: the area's handler may be async.
    let turn: Promise<void> = Promise.resolve();
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        ws.close(1003, 'text frames only');
        return;
      }
      const text = textOf(data);
      turn = turn.then(async () => {
        if (ws.readyState !== ws.OPEN) return;
        try {
          await handlers.message(text);
        } catch (err) {
          services.logger.error({ err, socket: route.path, request_id: requestId }, 'socket handler failed');
          ws.close(1011, 'internal error');
        }
      });
    });
    ws.on('close', (code) => handlers.closed?.(code));
    ws.on('error', (err) =>
      services.logger.warn({ err, socket: route.path, request_id: requestId }, 'socket error'),
    );
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    upgrade(req, socket, head).catch((err: unknown) => {
      services.logger.error({ err }, 'socket upgrade failed');
      if (!socket.destroyed) refuseUpgrade(socket, 500, 'Internal server error');
    });
  }
  server.on('upgrade', onUpgrade);

  return {
    async close() {
      server.off('upgrade', onUpgrade);
      for (const client of wss.clients) client.close(1001, 'server shutting down');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

function connectionOf(ws: WebSocket): SocketConnection {
  return {
    send(text) {
      if (ws.readyState === ws.OPEN) ws.send(text);
    },
    close(code = 1000, reason = '') {
      ws.close(code, reason);
    },
  };
}
