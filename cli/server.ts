// Starts the HTTP server and stops it gracefully: on SIGTERM or SIGINT it stops accepting
// connections, lets in-flight requests finish, then closes the services (flushing key usage and
// the database) before exiting, so a rolling deploy drops no request and loses no write.
import { Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { createServices } from '../app/services.ts';
import type { Config } from '../core/config.ts';
import type { Services } from '../core/services.ts';
import { createApp } from '../http/app.ts';
import { attachPublicSockets, type PublicSockets } from '../rest/public-sockets.ts';
import { JOBS } from '../tools/index.ts';
import { type BackgroundWork, startBackgroundWork } from '../workers/runtime.ts';

/** How long in-flight requests get after a stop signal before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;
/** While draining, how often keep-alive connections that have become idle are closed. */
const IDLE_SWEEP_MS = 50;

export interface RunningServer {
  url: string;
  services: Services;
  /** Stops accepting, waits for in-flight requests (up to the drain timeout), closes the services. */
  close(): Promise<void>;
}

function listen(server: ServerType, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('the server has no TCP address'));
        return;
      }
      resolve(address);
    });
  });
}

function displayUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

export interface ServerOptions {
  /**
   * Run the relay, sweeper and job workers in this process (the default). Off when a separate
   * `crm worker` runs them (`crm serve --no-workers` or WORKERS=off).
   */
  workers?: boolean;
  /** Migrate the database first (the default); off in an API process of `--processes N`. */
  migrate?: boolean;
  /** Also stop, as on SIGTERM, when this settles: the primary's request (cli/cluster.ts). */
  stopWhen?: Promise<void>;
}

/**
 * BullMQ knobs for tests and operators: CRM_WORKER_STALLED_MS (how soon a job of a killed worker
 * is retried elsewhere) and CRM_QUEUE_PREFIX (the Redis key prefix, default "bull").
 */
export function queueOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): {
  stalledMs?: number;
  prefix?: string;
} {
  const raw = env.CRM_WORKER_STALLED_MS;
  let stalledMs: number | undefined;
  if (raw !== undefined && raw !== '') {
    stalledMs = Number(raw);
    if (!Number.isInteger(stalledMs) || stalledMs < 100) {
      throw new Error(`CRM_WORKER_STALLED_MS must be a whole number of milliseconds >= 100, got "${raw}"`);
    }
  }
  return {
    ...(stalledMs !== undefined ? { stalledMs } : {}),
    ...(env.CRM_QUEUE_PREFIX ? { prefix: env.CRM_QUEUE_PREFIX } : {}),
  };
}

async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  // The declared jobs, so an API node without workers checks what it enqueues as a worker would.
  const services = await createServices(config, {
    queue: queueOptionsFromEnv(),
    jobs: JOBS,
    migrate: options.migrate !== false,
  });
  const app = createApp(services);
  const server = createAdaptorServer({ fetch: app.fetch });
  let address: AddressInfo;
  try {
    address = await listen(server, config.port, config.host);
  } catch (err) {
    await services.close();
    throw err;
  }
  // The areas' WebSockets (the voice relay) share the port: upgrades never reach the Hono app.
  const sockets: PublicSockets | undefined =
    server instanceof HttpServer ? attachPublicSockets(server, services) : undefined;
  const url = displayUrl(config.host, address.port);
  services.logger.info({ url, database: services.db.kind }, 'CRM server listening');
  let background: BackgroundWork | undefined;
  if (options.workers !== false) {
    background = await startBackgroundWork(services);
    services.logger.info({ queue: services.jobs.kind }, 'background workers started');
  } else {
    services.logger.info('background workers off: run `crm worker` to relay and deliver webhooks');
  }

  // Responses not yet sent, so a drain can tell their keep-alive clients to close the connection.
  const pending = new Set<ServerResponse>();
  let draining = false;
  const closeAfterResponse = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  if (server instanceof HttpServer) {
    server.on('request', function trackResponse(_req, res) {
      if (draining) closeAfterResponse(res);
      pending.add(res);
      res.once('close', () => pending.delete(res));
    });
  }

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      // Open sockets would hold the drain until the force timeout: they are told to go away first.
      await sockets?.close();
      const force = setTimeout(() => {
        if (server instanceof HttpServer) server.closeAllConnections();
      }, DRAIN_TIMEOUT_MS);
      force.unref();
      // close() stops accepting at once and calls back when the last connection has ended, but it
      // closes only the connections idle at that moment: a keep-alive connection whose response
      // finishes later would stay open until its keep-alive timeout. So responses in flight say
      // `Connection: close`, and connections that have gone idle are swept.
      for (const res of pending) closeAfterResponse(res);
      const sweep = setInterval(() => {
        if (server instanceof HttpServer) server.closeIdleConnections();
      }, IDLE_SWEEP_MS);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearInterval(sweep);
      clearTimeout(force);
      // The relay and sweeper stop first; services.close() then lets running jobs finish.
      await background?.stop();
      await services.close();
    })();
    return closing;
  };
  return { url, services, close };
}

/** Runs the server until SIGTERM or SIGINT; resolves with the exit code once it has shut down. */
export async function runServer(config: Config, options: ServerOptions = {}): Promise<number> {
  const running = await startServer(config, options);
  return untilStopSignal(running.services.logger, 'stopping: draining in-flight requests', running.close, {
    ...(options.stopWhen ? { stopWhen: options.stopWhen } : {}),
  });
}

/**
 * Waits for SIGTERM or SIGINT (or `stopWhen`: the supervising primary's request), logs `stopping`,
 * runs `close`; resolves with the exit code.
 */
export function untilStopSignal(
  logger: Services['logger'],
  stopping: string,
  close: () => Promise<void>,
  options: { stopWhen?: Promise<void> } = {},
): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopped = false;
    const stop = (by: NodeJS.Signals | 'primary') => {
      if (stopped) {
        // The primary's message repeats what the terminal's SIGINT already said to the whole group.
        if (by === 'primary') return;
        // A second signal means the operator will not wait for the drain.
        logger.warn({ signal: by }, 'second stop signal, exiting now');
        resolve(1);
        return;
      }
      stopped = true;
      logger.info(by === 'primary' ? { by } : { signal: by }, stopping);
      close().then(
        () => {
          logger.info('stopped');
          resolve(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'error while stopping');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    void options.stopWhen?.then(() => stop('primary'));
  });
}
