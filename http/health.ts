// Liveness and readiness probes for an operator's load balancer and orchestrator.
import type { Hono } from 'hono';
import type { Logger } from '../core/logger.ts';
import type { Services } from '../core/services.ts';
import type { AppEnv } from './env.ts';

/** A readiness check that does not answer in this time counts as failed: a probe must not hang. */
export const READY_CHECK_TIMEOUT_MS = 1500;

type CheckResult = 'ok' | 'error';

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function check(logger: Logger, name: string, probe: () => Promise<void>): Promise<CheckResult> {
  try {
    await withTimeout(probe(), READY_CHECK_TIMEOUT_MS, name);
    return 'ok';
  } catch (err) {
    // The reason goes to the log, not to the unauthenticated caller of the probe.
    logger.warn(
      { check: name, err: err instanceof Error ? err.message : String(err) },
      'readiness check failed',
    );
    return 'error';
  }
}

/**
 * `GET /healthz`: the process is up and serving (liveness; no dependency is touched, so a database
 * outage does not get every node restarted). `GET /readyz`: the node can serve requests now
 * (readiness: database, its connection pool not saturated, and Redis when configured), 503
 * otherwise, so a load balancer sends new work to a node that can take it.
 */
export function mountHealthChecks(app: Hono<AppEnv>, services: Services): void {
  const { db, redis, logger } = services;

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  app.get('/readyz', async (c) => {
    // Read before the probes run: the database probe itself queues for a connection when none is free.
    const databasePool = db.poolStatus();
    const [database, redisCheck] = await Promise.all([
      check(logger, 'database', () => db.ping()),
      redis
        ? check(logger, 'redis', async () => {
            const reply = await redis.ping();
            if (reply !== 'PONG') throw new Error(`unexpected PING reply ${reply}`);
          })
        : Promise.resolve('not_configured' as const),
    ]);
    const checks = { database, database_pool: databasePool, redis: redisCheck };
    const ready = database === 'ok' && databasePool === 'ok' && redisCheck !== 'error';
    c.header('Cache-Control', 'no-store');
    return ready ? c.json({ status: 'ready', checks }, 200) : c.json({ status: 'unavailable', checks }, 503);
  });
}
