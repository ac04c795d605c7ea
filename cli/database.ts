// The database as the one-shot commands (migrate, the admin commands without --url) open it.
import { loadConfig } from '../core/config.ts';
import type { Database } from '../core/db/client.ts';
import { createLogger } from '../core/logger.ts';

/** Opens the configured database, brings its schema up to date, runs `fn`, and closes it. */
export async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const { openDatabase } = await import('../core/db/client.ts');
  const { connectInvalidationPublisher } = await import('../core/auth/cache.ts');
  const db = await openDatabase({
    url: config.databaseUrl,
    directUrl: config.databaseDirectUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
    poolMax: 2,
    timeouts: config.dbTimeouts,
  });
  // With REDIS_URL, running API nodes cache verified credentials: publish this process's changes
  // (suspension, plan, revoked tokens) so they take effect on their very next request. Without it
  // the database's triggers notify the nodes of this process's changes (core/auth/cache.ts).
  const disconnect = config.redisUrl
    ? connectInvalidationPublisher(db, config.redisUrl, createLogger('warn'))
    : undefined;
  try {
    await db.migrate();
    return await fn(db);
  } finally {
    disconnect?.();
    await db.close();
  }
}
