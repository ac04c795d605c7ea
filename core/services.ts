// The process-wide services a request may need, built once at start-up and passed explicitly
// (no module-level singletons), so tests build as many independent apps as they like. The kernel
// defines only their shape and the ports; app/services.ts, the composition root outside the
// kernel, chooses each port's adapter and builds them (docs/architecture.md).
import type { Redis } from 'ioredis';
import type { AccountMailer } from './account-mail.ts';
import type { ChatModel } from './ai.ts';
import type { CredentialCache } from './auth/cache.ts';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { LogLevelStore } from './log-levels.ts';
import type { Logger } from './logger.ts';
import type { Mailer } from './mail.ts';
import type { RateLimits } from './rate-limits.ts';
import type { SecretBox } from './secrets.ts';
import type { FileStore } from './storage.ts';
import type { TelephonyProvider } from './telephony.ts';
import type { CredentialUsage } from './usage.ts';

export interface Services {
  config: Config;
  db: Database;
  logger: Logger;
  usage: CredentialUsage;
  /** HS256 key for session JWTs. */
  jwtKey: Uint8Array;
  /** The Redis connection for shared state (rate limits, cache invalidation) when REDIS_URL is set. */
  redis: Redis | null;
  // `jobs` (core/jobs.ts) and `queue` (core/queue.ts) are added by the job port's own files, by
  // declaration merging: the port names Services (what a job's handler receives), so naming the
  // port here would tie the three files in a cycle (docs/decisions.md "The job port adds itself").
  /** The request limits of the specification; null with RATE_LIMITS=off, or when a benchmark or test builds the app without them. */
  rateLimits: RateLimits | null;
  /** The log level each credential's MCP client set (core/log-levels.ts): Redis with REDIS_URL, memory otherwise. */
  logLevels: LogLevelStore;
  /** Verified credentials, so hot callers skip the token/user/organization join (core/auth/cache.ts). */
  authCache: CredentialCache;
  /** Files: S3 when S3_BUCKET is set, DATA_DIR/files otherwise (its links served by rest/file-routes.ts). */
  files: FileStore;
  /** System mail (core/mail.ts): SMTP with SMTP_URL, `.eml` files under DATA_DIR/mail otherwise. */
  mailer: Mailer;
  /** Mail users send through their own connected SMTP accounts (core/account-mail.ts). */
  accountMail: AccountMailer;
  /** Encryption of secrets at rest (core/secrets.ts); keys resolved at first use. */
  secrets: SecretBox;
  /** The chat model (core/ai.ts) when AI_BASE_URL, AI_API_KEY and AI_MODEL are set; null otherwise. */
  ai: ChatModel | null;
  /** Messages, calls and conference participants through the organization's provider account (core/telephony.ts). */
  telephony: TelephonyProvider;
  close(): Promise<void>;
}
