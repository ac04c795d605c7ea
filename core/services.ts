// The process-wide services a request may need, built once at start-up and passed explicitly
// (no module-level singletons), so tests build as many independent apps as they like.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.ts';
import { type Database, openDatabase } from './db/client.ts';
import { createLogger, type Logger } from './logger.ts';
import { CredentialUsage } from './usage.ts';

export interface Services {
  config: Config;
  db: Database;
  logger: Logger;
  usage: CredentialUsage;
  /** HS256 key for session JWTs. */
  jwtKey: Uint8Array;
  close(): Promise<void>;
}

export interface CreateServicesOptions {
  logger?: Logger;
  /** Keep PGlite in memory instead of under DATA_DIR (tests). */
  inMemory?: boolean;
}

/** JWT_SECRET when set; on the embedded default a generated secret kept in DATA_DIR survives restarts. */
function resolveJwtKey(config: Config, persist: boolean): Uint8Array {
  if (config.jwtSecret) return new TextEncoder().encode(config.jwtSecret);
  if (!persist) return randomBytes(32);
  mkdirSync(config.dataDir, { recursive: true });
  const file = join(config.dataDir, 'jwt-secret');
  if (!existsSync(file)) writeFileSync(file, randomBytes(48).toString('base64url'), { mode: 0o600 });
  return new TextEncoder().encode(readFileSync(file, 'utf8').trim());
}

export async function createServices(config: Config, options: CreateServicesOptions = {}): Promise<Services> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const embedded = !config.databaseUrl;
  const db = await openDatabase({
    url: config.databaseUrl,
    dataDir: embedded && !options.inMemory ? config.dataDir : undefined,
  });
  await db.migrate();
  const usage = new CredentialUsage(db.system);
  usage.start();
  const jwtKey = resolveJwtKey(config, embedded && !options.inMemory);
  return {
    config,
    db,
    logger,
    usage,
    jwtKey,
    async close() {
      await usage.stop().catch((err: unknown) => logger.warn({ err }, 'could not flush key usage'));
      await db.close();
    },
  };
}
