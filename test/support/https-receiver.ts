// A real HTTPS webhook receiver for tests: node:https on 127.0.0.1 with a self-signed certificate
// for localhost/127.0.0.1 (made with openssl), recording every request's raw body bytes and headers
// and answering as each test scripts it (status, slow headers, trickled body, redirect).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received, before any parsing. */
  body: Buffer;
  /** Date.now() when the request's headers arrived. */
  receivedAt: number;
}

export interface ReceiverBehaviour {
  /** Response status (default 200). */
  status?: number;
  /** Response body (default "ok"). */
  body?: string;
  /** Wait this long before sending the status line and headers. */
  headersDelayMs?: number;
  /** Send headers at once, then one body byte every 100 ms for this long before ending. */
  trickleBodyMs?: number;
  /** Answer 302 with Location pointing at this receiver's path (for example `/redirected`). */
  redirectTo?: string;
  /** Hold the answer until this settles, so a delivery stays in flight for as long as a test needs. */
  until?: Promise<void>;
}

export interface SelfSignedCertificate {
  key: string;
  cert: string;
}

/** A fresh self-signed certificate for CN=localhost with SANs localhost and 127.0.0.1. */
export function createSelfSignedCertificate(): SelfSignedCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'crm-receiver-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class HttpsReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** TLS handshakes completed so far ('secureConnection'): a reused connection adds none. */
  tlsSessions = 0;
  private readonly script: ReceiverBehaviour[] = [];
  private fallback: ReceiverBehaviour = { status: 200 };
  private readonly waiters: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    /** The certificate to trust (PEM); it is its own CA. */
    readonly ca: string,
    readonly origin: string,
  ) {}

  static async start(
    certificate: SelfSignedCertificate = createSelfSignedCertificate(),
  ): Promise<HttpsReceiver> {
    let receiver: HttpsReceiver | undefined;
    const server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
      if (receiver) void receiver.handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('receiver has no TCP address');
    const port = (address satisfies AddressInfo).port;
    const started = new HttpsReceiver(server, certificate.cert, `https://127.0.0.1:${port}`);
    server.on('secureConnection', () => {
      started.tlsSessions++;
    });
    receiver = started;
    return receiver;
  }

  /** The URL of a path on this receiver (by IP, so no DNS is involved). */
  url(path = '/hook'): string {
    return `${this.origin}${path}`;
  }

  /** The next requests answer with these behaviours, in order; later ones get the fallback. */
  respondWith(...behaviours: ReceiverBehaviour[]): void {
    this.script.push(...behaviours);
  }

  /** What requests get once the script is used up (default: 200). */
  setFallback(behaviour: ReceiverBehaviour): void {
    this.fallback = behaviour;
  }

  /** Forgets recorded requests, the TLS session count and the script. */
  reset(): void {
    this.requests.length = 0;
    this.tlsSessions = 0;
    this.script.length = 0;
    this.fallback = { status: 200 };
  }

  /** Requests to one path. */
  hits(path = '/hook'): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Resolves once `count` requests have been recorded; rejects after `timeoutMs`. */
  async waitForRequests(count: number, timeoutMs = 5000): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`receiver got ${this.requests.length} of ${count} requests in ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.requests.slice(0, count);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    const url = new URL(req.url ?? '/', this.origin);
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      headers: req.headers,
      body: Buffer.concat(chunks),
      receivedAt,
    });
    for (const wake of this.waiters.splice(0)) wake();
    const behaviour = this.script.shift() ?? this.fallback;
    // A client that gave up makes further writes fail; that is the point of those scenarios.
    res.on('error', () => undefined);
    if (behaviour.until) await behaviour.until;
    if (behaviour.headersDelayMs) await sleep(behaviour.headersDelayMs);
    if (res.destroyed) return;
    if (behaviour.redirectTo !== undefined) {
      res.writeHead(302, { location: `${this.origin}${behaviour.redirectTo}` }).end();
      return;
    }
    const body = behaviour.body ?? 'ok';
    if (behaviour.trickleBodyMs) {
      res.writeHead(behaviour.status ?? 200, { 'content-type': 'text/plain' });
      const until = Date.now() + behaviour.trickleBodyMs;
      while (Date.now() < until && !res.destroyed) {
        res.write('.');
        await sleep(100);
      }
      if (!res.destroyed) res.end(body);
      return;
    }
    res.writeHead(behaviour.status ?? 200, { 'content-type': 'text/plain' }).end(body);
  }
}
