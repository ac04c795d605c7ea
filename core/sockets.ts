// WebSockets an area serves (the voice relay a provider's call connects to): the kernel's contract
// only. An area declares `socketRoutes` in its defineArea; the HTTP server answers the upgrade
// (rest/public-sockets.ts, on the `ws` library): it matches the path, counts the request against the
// per-IP limit of public pages and hooks, and asks the route's `open` whether to accept. The route
// checks the handshake itself (a provider's signature) and answers a refusal or the handlers of the
// accepted connection. Text frames only: every socket the product speaks carries JSON messages.
import type { Services } from './services.ts';

/** The accepted connection as an area sees it. */
export interface SocketConnection {
  /** Sends one text frame; ignored once the connection is closing. */
  send(text: string): void;
  /** Closes the connection (1000 by default) with a short reason. */
  close(code?: number, reason?: string): void;
}

/** What the area does with an accepted connection's events. */
export interface SocketHandlers {
  /** One text frame received; an error thrown here closes the connection with 1011 and is logged. */
  message(text: string): void | Promise<void>;
  /** The connection ended (either side), with its close code. */
  closed?(code: number): void;
}

/** The upgrade request, before anything is accepted. */
export interface SocketRequest {
  /** The path with its query, as received (`/voice/relay/abc?x=1`). */
  pathWithQuery: string;
  params: Readonly<Record<string, string>>;
  headers: Readonly<Record<string, string | undefined>>;
  /** The client's address as the rate limits see it (core/client-ip.ts, TRUST_PROXY). */
  ip: string;
  requestId: string;
}

export type SocketAnswer =
  | { refuse: 400 | 401 | 403 | 404 | 409 | 503; reason: string }
  | { accept(connection: SocketConnection): SocketHandlers };

export interface SocketRoute {
  /** Path pattern from the root; `:name` matches one segment (`/voice/relay/:agentId`). */
  path: string;
  /** Decides the handshake; never throws for a bad request (refuse instead). */
  open(request: SocketRequest, services: Services): Promise<SocketAnswer>;
}

/** The parameters of `path` when it matches `pattern`, else null (segments compared one by one). */
export function matchSocketPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const part = want[i] ?? '';
    const value = got[i] ?? '';
    if (part.startsWith(':')) {
      if (value === '') return null;
      try {
        params[part.slice(1)] = decodeURIComponent(value);
      } catch {
        return null;
      }
    } else if (part !== value) {
      return null;
    }
  }
  return params;
}
