// Starts the HTTP server and stops it gracefully: on SIGTERM or SIGINT it stops accepting
// connections, lets in-flight requests finish, then closes the services (flushing key usage and
// the database) before exiting, so a rolling deploy drops no request and loses no write.
import { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import type { Config } from '../core/config.ts';
import { createServices, type Services } from '../core/services.ts';
import { createApp } from '../rest/app.ts';

/** How long in-flight requests get after a stop signal before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

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

export async function startServer(config: Config): Promise<RunningServer> {
  const services = await createServices(config);
  const app = createApp(services);
  const server = createAdaptorServer({ fetch: app.fetch });
  let address: AddressInfo;
  try {
    address = await listen(server, config.port, config.host);
  } catch (err) {
    await services.close();
    throw err;
  }
  const url = displayUrl(config.host, address.port);
  services.logger.info({ url, database: services.db.kind }, 'CRM server listening');

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const force = setTimeout(() => {
        if (server instanceof HttpServer) server.closeAllConnections();
      }, DRAIN_TIMEOUT_MS);
      force.unref();
      // close() stops accepting at once and calls back when the last connection has ended;
      // idle keep-alive connections are closed by it, busy ones after their response.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearTimeout(force);
      await services.close();
    })();
    return closing;
  };
  return { url, services, close };
}

/** Runs the server until SIGTERM or SIGINT; resolves with the exit code once it has shut down. */
export async function runServer(config: Config): Promise<number> {
  const running = await startServer(config);
  const { logger } = running.services;
  return new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        // A second signal means the operator will not wait for the drain.
        logger.warn({ signal }, 'second stop signal, exiting now');
        resolve(1);
        return;
      }
      stopping = true;
      logger.info({ signal }, 'stopping: draining in-flight requests');
      running.close().then(
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
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
