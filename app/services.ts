// The composition root: chooses the adapter of each kernel port from the configuration (PGlite or
// PostgreSQL, in-process queue or BullMQ, disk or S3, .eml files or SMTP, the chat model, telephony) and
// builds the services (core/services.ts) once at start-up. It is the one place that names
// providers/, and it sits outside the kernel so that core/ knows only the ports
// (docs/architecture.md, "Ports for the outside world").
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { AUTH_CHANNEL, bindCredentialCache, CredentialCache } from '../core/auth/cache.ts';
import { type Config, startupWarnings } from '../core/config.ts';
import { type Database, openDatabase, type PgliteLease } from '../core/db/client.ts';
import {
  type ListenOptions,
  listenForNotifications,
  type NotificationSource,
} from '../core/db/notifications.ts';
import type { JobRegistry, Jobs } from '../core/jobs.ts';
import { MemoryLogLevelStore, RedisLogLevelStore } from '../core/log-levels.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import { EmlMailer, type Mailer } from '../core/mail.ts';
import { BullMqQueue, checkRedisEviction } from '../core/queue-bullmq.ts';
import { InProcessQueue } from '../core/queue-in-process.ts';
import { RateLimits } from '../core/rate-limits.ts';
import { createLazySecretBox, resolveSecretKeys } from '../core/secrets.ts';
import type { Services } from '../core/services.ts';
import { DiskFileStore, deriveFileSigningKey, type FileStore } from '../core/storage.ts';
import { CredentialUsage } from '../core/usage.ts';
import { OpenAiChatModel } from '../providers/ai-chat.ts';
import { SmtpAccountMailer } from '../providers/smtp-account.ts';
import { SmtpMailer } from '../providers/smtp-mailer.ts';
import { TwilioProvider } from '../providers/twilio.ts';

export interface CreateServicesOptions {
  logger?: Logger;
  /** Keep PGlite in memory instead of under DATA_DIR (tests). */
  inMemory?: boolean;
  /** With inMemory: start PGlite from this migrated image (core/db/client.ts buildPgliteImage). */
  pgliteImage?: Blob;
  /** With inMemory: use this lent PGlite instead of starting one (core/db/client.ts `lease`). */
  pgliteLease?: PgliteLease;
  /**
   * Leave the request limits out, for benchmarks and tests that measure something else. A
   * deployment turns them off with RATE_LIMITS=off (logged as a warning at start).
   */
  withoutRateLimits?: boolean;
  /** BullMQ settings when REDIS_URL is set: a key prefix (tests) and the stalled-job lock time. */
  queue?: { prefix?: string; stalledMs?: number };
  /**
   * The declared jobs (tools/index.ts `JOBS`), which the queue checks enqueued payloads against
   * and takes attempts and backoff from; the runtime (workers/runtime.ts) hands them again.
   */
  jobs?: JobRegistry;
  /** Certificate authorities the connected-account SMTP client trusts besides the system's (tests). */
  accountMailCa?: string | Buffer;
  /** Timings of the credential cache's listener (PostgreSQL without Redis): tests slow its reconnection. */
  credentialListener?: Pick<ListenOptions, 'retryMs' | 'probeEveryMs' | 'probeTimeoutMs'>;
  /**
   * Bring the schema up to date first (the default). Off in the API processes of `crm serve
   * --processes N`, whose supervisor migrated once before starting them (cli/cluster.ts).
   */
  migrate?: boolean;
}

/**
 * Waits (bounded) for the first connection, so a node that starts with Redis up shares counters
 * from its first request; with Redis down it starts anyway on the memory fallback.
 */
function waitUntilReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
  });
}

/**
 * A Redis connection that fails fast while Redis is down (no offline queue), so a request never
 * waits on it: the rate limiter falls back to its in-memory insurance counters instead. It
 * pipelines by itself: the commands issued in one turn of the event loop (the credential cache's
 * MGET of every request read in that turn, their rate-limit counters) leave in one write, where
 * each would otherwise cost its own system call (docs/decisions.md "Redis commands pipelined").
 */
function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: false,
    enableAutoPipelining: true,
  });
  let down = false;
  redis.on('error', (err) => {
    if (!down)
      logger.warn({ err: err.message }, 'Redis unreachable; rate limits fall back to per-node memory');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('Redis reachable again');
    down = false;
  });
  return redis;
}

/**
 * The credential cache's listener: LISTEN on a connection of its own, on the direct URL (a PgBouncer
 * in transaction mode cannot carry it), probed with messages sent through the pool as writers send.
 */
function credentialListener(
  config: Config,
  db: Database,
  logger: Logger,
  timings: CreateServicesOptions['credentialListener'],
): NotificationSource {
  const url = config.databaseDirectUrl ?? config.databaseUrl;
  if (!url) throw new Error('the credential listener needs a PostgreSQL URL');
  return listenForNotifications({
    url,
    channel: AUTH_CHANNEL,
    send: async (channel, payload) => {
      await db.system.execute(sql`select pg_notify(${channel}, ${payload})`);
    },
    logger,
    ...timings,
  });
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

async function createFileStore(config: Config, jwtKey: Uint8Array): Promise<FileStore> {
  // The AWS SDK is hundreds of modules: loaded only by a deployment that stores files in S3.
  if (config.s3) return new (await import('../providers/s3-storage.ts')).S3FileStore(config.s3);
  return new DiskFileStore({
    root: join(config.dataDir, 'files'),
    signingKey: deriveFileSigningKey(jwtKey),
    publicBaseUrl: config.publicBaseUrl,
  });
}

export async function createServices(config: Config, options: CreateServicesOptions = {}): Promise<Services> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const embedded = !config.databaseUrl;
  const db = await openDatabase({
    url: config.databaseUrl,
    directUrl: config.databaseDirectUrl,
    dataDir: embedded && !options.inMemory ? config.dataDir : undefined,
    poolMax: config.dbPoolMax,
    timeouts: config.dbTimeouts,
    image: embedded && options.inMemory ? options.pgliteImage : undefined,
    lease: embedded && options.inMemory ? options.pgliteLease : undefined,
  });
  if (options.migrate !== false) await db.migrate();
  const usage = new CredentialUsage(db.system);
  usage.start();
  const jwtKey = resolveJwtKey(config, embedded && !options.inMemory);
  const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : null;
  if (redis) {
    await waitUntilReady(redis, 2000);
    await checkRedisEviction(redis, logger);
  }
  for (const warning of startupWarnings(config)) logger.warn(warning);
  const rateLimits =
    options.withoutRateLimits || !config.rateLimits ? null : new RateLimits(redis ?? undefined);
  // PostgreSQL without Redis: other processes change credentials too, and the database's triggers
  // tell this one through its listener (core/auth/cache.ts notify mode).
  const authCache = new CredentialCache({
    mode: redis ? 'redis' : embedded ? 'local' : 'notify',
    redis,
    notifications:
      redis || embedded ? null : credentialListener(config, db, logger, options.credentialListener),
    logger,
  });
  await authCache.start();
  bindCredentialCache(db, authCache);
  // Every node must see a level any node stored: Redis when there is one; one process needs only memory.
  const logLevels = redis ? new RedisLogLevelStore(redis, logger) : new MemoryLogLevelStore();
  const jobs: Jobs = config.redisUrl
    ? new BullMqQueue(config.redisUrl, {
        logger,
        ...options.queue,
        ...(options.jobs ? { jobs: options.jobs } : {}),
      })
    : new InProcessQueue(logger, options.jobs);
  const files = await createFileStore(config, jwtKey);
  const mailer: Mailer = config.smtp
    ? new SmtpMailer(config.smtp, config.mailFrom)
    : new EmlMailer(join(config.dataDir, 'mail'), config.mailFrom);
  // Pooled SMTP sessions per connected account, closed with the services.
  const accountMail = new SmtpAccountMailer({
    ca: options.accountMailCa,
    allowPrivateHosts: config.connectedAccountsAllowPrivateHosts,
  });
  const secrets = createLazySecretBox(() => resolveSecretKeys(config, !options.inMemory, logger));
  return {
    config,
    db,
    logger,
    usage,
    jwtKey,
    redis,
    rateLimits,
    logLevels,
    authCache,
    jobs,
    queue: jobs,
    files,
    mailer,
    accountMail,
    secrets,
    ai: config.ai ? new OpenAiChatModel(config.ai) : null,
    telephony: new TwilioProvider(config.telephony),
    async close() {
      await jobs.close();
      await files.close();
      await mailer.close();
      await accountMail.close();
      await usage.stop().catch((err: unknown) => logger.warn({ err }, 'could not flush key usage'));
      await authCache.close();
      await db.close();
      redis?.disconnect();
    },
  };
}
