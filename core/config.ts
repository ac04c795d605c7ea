// Configuration comes from the environment only, parsed once and validated, so a typo in a
// deployment fails at start-up with a clear message instead of at the first request.
import { z } from 'zod';
import type { AiSettings } from './ai.ts';
import { parseSenderAddress } from './mail.ts';
import { booleanSetting } from './settings.ts';

const bool = booleanSetting;

function commaList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** An exact browser origin (`https://app.example.com`, `http://localhost:5173`): what the Origin header carries. */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

/** A bare host name as the Host header names it, without port: `crm.example.com`, `10.0.0.5`, `[::1]`. */
function isHostname(value: string): boolean {
  try {
    // The URL parser drops a port and lower-cases, so only a bare, canonical host name survives unchanged.
    return new URL(`http://${value}`).hostname === value;
  } catch {
    return false;
  }
}

const msList = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'a comma-separated list of milliseconds')
  .transform((s) => s.split(',').map(Number));

/** Where system mail goes when SMTP_URL is set; the password stays out of every message and log. */
export interface SmtpSettings {
  host: string;
  port: number;
  /** smtps://: TLS from the first byte (port 465); smtp:// upgrades with STARTTLS when offered. */
  secure: boolean;
  auth: { user: string; pass: string } | undefined;
}

/**
 * SMTP_URL as settings, or the reason it is unusable. The reasons never quote the URL, which
 * holds the password.
 */
export function parseSmtpUrl(value: string): SmtpSettings | string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not a URL; expected smtp://user:pass@host:port or smtps://user:pass@host:port';
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return 'the scheme must be smtp:// or smtps://';
  if (!url.hostname) return 'the URL names no host';
  if (url.pathname !== '' && url.pathname !== '/') return 'the URL must not have a path';
  const secure = url.protocol === 'smtps:';
  let user: string;
  let pass: string;
  try {
    user = decodeURIComponent(url.username);
    pass = decodeURIComponent(url.password);
  } catch {
    return 'the user name or password is not valid percent-encoding';
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    auth: user ? { user, pass } : undefined,
  };
}

/** A SECRETS_KEY value: 32 bytes in base64 (standard or URL-safe, padding optional). */
function parseSecretsKey(value: string): Buffer | null {
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return null;
  const key = Buffer.from(value, 'base64');
  return key.length === 32 ? key : null;
}

const KEY_HINT = '32 random bytes in base64, e.g. the output of `openssl rand -base64 32`';

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./.data'),
  DATABASE_URL: z.string().url().optional(),
  // A direct connection to the same database, for what a transaction pooler (PgBouncer) in front of
  // DATABASE_URL cannot carry: the migrations' session lock (core/db/client.ts) and the credential
  // cache's LISTEN (core/db/notifications.ts). Default: DATABASE_URL.
  DATABASE_DIRECT_URL: z.string().url().optional(),
  // PostgreSQL connection pool and its time limits (core/db/client.ts); 0 turns a limit off.
  DB_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(2_147_483_647).default(30_000),
  DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(0).max(2_147_483_647).default(5_000),
  DB_POOL_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(0).max(2_147_483_647).default(5_000),
  REDIS_URL: z.string().url().optional(),
  JWT_SECRET: z.string().min(32, 'JWT_SECRET must be at least 32 characters').optional(),
  CRM_ADMIN_TOKEN: z.string().min(16, 'CRM_ADMIN_TOKEN must be at least 16 characters').optional(),
  SIGNUP_ENABLED: bool(true),
  DEFAULT_PLAN: z.enum(['free', 'starter', 'pro', 'enterprise']).default('free'),
  TRUST_PROXY: z.string().default('false'),
  // The request limits (core/rate-limits.ts): `off` only for benchmarks or behind a proxy that limits.
  RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  WEBHOOK_RETRY_DELAYS_MS: msList.default([10000, 20000]),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(15000),
  // Connections (and requests in flight) per receiver origin and process (tools/webhooks/ssrf.ts).
  WEBHOOK_CONNECTIONS_PER_ORIGIN: z.coerce.number().int().min(1).max(1024).default(64),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool(false),
  // Connected accounts' SMTP servers are tenant input: loopback/private hosts are refused unless true.
  CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS: bool(false),
  // Trashed records older than this are deleted for good by the purge job (tools/trash/jobs.ts).
  TRASH_RETENTION_DAYS: z.coerce.number().int().min(1).max(36500).default(30),
  TRASH_PURGE_INTERVAL_MS: z.coerce.number().int().min(10).max(2_147_483_647).default(3_600_000),
  // Days the content (bodies, attachments) of a sent or failed outgoing mail is kept (core/mail-scrub.ts).
  MAIL_RETENTION_DAYS: z.coerce.number().int().min(1).max(36500).default(30),
  // Jobs one process runs at once (webhook deliveries, mail, scheduled email, workflow steps).
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  // System mail (core/mail.ts): SMTP when SMTP_URL is set, .eml files under DATA_DIR/mail otherwise.
  SMTP_URL: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return undefined;
      const settings = parseSmtpUrl(value);
      if (typeof settings === 'string') {
        ctx.addIssue({ code: 'custom', message: settings });
        return z.NEVER;
      }
      return settings;
    }),
  MAIL_FROM: z
    .string()
    .optional()
    .refine((v) => v === undefined || parseSenderAddress(v) !== null, {
      message: 'one sender address such as billing@example.com or "Acme Billing <billing@example.com>"',
    }),
  // Secrets at rest (core/secrets.ts). The messages never quote the value.
  SECRETS_KEY: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return undefined;
      const key = parseSecretsKey(value);
      if (!key) {
        ctx.addIssue({ code: 'custom', message: KEY_HINT });
        return z.NEVER;
      }
      return key;
    }),
  SECRETS_KEY_PREVIOUS: z
    .string()
    .default('')
    .transform((value, ctx) => {
      const keys = commaList(value).map(parseSecretsKey);
      const usable = keys.filter((k): k is Buffer => k !== null);
      if (usable.length !== keys.length) {
        ctx.addIssue({ code: 'custom', message: `a comma-separated list of keys, each ${KEY_HINT}` });
        return z.NEVER;
      }
      return usable;
    }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MCP_ALLOWED_ORIGINS: z.string().default(''),
  MCP_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((s) => commaList(s).map((h) => h.toLowerCase()))
    .refine((hosts) => hosts.every(isHostname), {
      message: 'a comma-separated list of host names such as crm.example.com or [::1] (no scheme, no port)',
    }),
  MCP_DIRECT_CALLS: z.enum(['on', 'off']).default('on'),
  // Absolute links the server hands out (file links, later reset mails and public pages).
  PUBLIC_BASE_URL: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), { message: 'an http(s) URL such as https://crm.example.com' })
    .optional(),
  // The model port (core/ai.ts): an OpenAI-compatible chat endpoint; all three or none.
  AI_BASE_URL: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), { message: 'an http(s) URL such as https://api.openai.com/v1' })
    .optional(),
  AI_API_KEY: z.string().min(1).optional(),
  AI_MODEL: z.string().min(1).max(200).optional(),
  AI_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(20_000),
  // The telephony port (core/telephony.ts): Twilio's REST API, or a compatible host (a test peer).
  TWILIO_API_BASE_URL: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), { message: 'an http(s) URL such as https://api.twilio.com' })
    .default('https://api.twilio.com'),
  TWILIO_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  // Files go to S3 when S3_BUCKET is set, to DATA_DIR/files otherwise (core/storage.ts).
  S3_BUCKET: z.string().min(1).optional(),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: bool(false),
  CORS_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((s) => commaList(s))
    .refine((origins) => origins.every(isOrigin), {
      message:
        'a comma-separated list of origins such as https://app.example.com (scheme, host, port; no path)',
    }),
});

export type Plan = z.infer<typeof envSchema>['DEFAULT_PLAN'];

/** The kernel's variables; an area may not declare one of these names (core/settings.ts). */
export const KERNEL_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

export interface Config {
  /**
   * The environment the configuration was loaded from, frozen: the areas' own variables are read
   * from it by their declared settings (core/settings.ts), which every serving process checks at start.
   */
  env: Readonly<Record<string, string | undefined>>;
  port: number;
  host: string;
  dataDir: string;
  /** `memory://` keeps PGlite in memory (tests); otherwise PGlite persists under dataDir. */
  databaseUrl: string | undefined;
  /**
   * DATABASE_DIRECT_URL: the same database without a pooler in between, for session-level work
   * (the migrations' advisory lock, the credential cache's LISTEN); undefined means DATABASE_URL is
   * direct itself.
   */
  databaseDirectUrl: string | undefined;
  /** PostgreSQL pool size per process. */
  dbPoolMax: number;
  /** Per-connection limits: statement run time, lock wait, wait for a free connection (ms, 0: none). */
  dbTimeouts: { statementMs: number; lockMs: number; acquireMs: number };
  redisUrl: string | undefined;
  jwtSecret: string | undefined;
  adminToken: string | undefined;
  signupEnabled: boolean;
  defaultPlan: Plan;
  /** Number of trusted proxy hops in front of the server; 0 means the socket address is the client. */
  trustProxyHops: number;
  /** RATE_LIMITS: false switches the request limits off (benchmarks, a limiting proxy in front). */
  rateLimits: boolean;
  webhookRetryDelaysMs: number[];
  webhookTimeoutMs: number;
  webhookConnectionsPerOrigin: number;
  webhookAllowPrivateTargets: boolean;
  /** Let connected accounts use SMTP servers on loopback/private addresses (development and tests). */
  connectedAccountsAllowPrivateHosts: boolean;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  /** Days a record stays in the trash before the purge job deletes it for good. */
  trashRetentionDays: number;
  /** How often the purge job runs (milliseconds). */
  trashPurgeIntervalMs: number;
  /** Days the bodies and attachments of sent or failed outgoing mail are kept. */
  mailRetentionDays: number;
  /** Jobs a process runs at once (crm serve's embedded workers, crm worker). */
  workerConcurrency: number;
  /** Origins allowed to call /mcp from a browser; requests without an Origin header are always allowed. */
  mcpAllowedOrigins: string[];
  /**
   * Host names /mcp accepts in the Host header besides its own loopback names (DNS rebinding). When
   * the server listens on loopback, only localhost, 127.0.0.1, [::1] and these are accepted;
   * elsewhere a non-empty list is enforced as it stands.
   */
  mcpAllowedHosts: string[];
  /**
   * MCP_DIRECT_CALLS: a plain 2025-era tools/call is answered without the SDK's per-request server
   * (mcp/direct-call.ts); `off` sends every request through the SDK, should the two ever disagree.
   */
  mcpDirectCalls: boolean;
  /** Browser origins allowed to call the HTTP API cross-origin (CORS); empty sends no CORS headers at all. */
  corsAllowedOrigins: string[];
  /** Origin (and optional path prefix) of the links the server hands out, without a trailing slash. */
  publicBaseUrl: string;
  /** S3 settings when S3_BUCKET is set; files stay on disk under DATA_DIR/files otherwise. */
  s3: S3Config | undefined;
  /** System mail over SMTP; undefined writes `.eml` files under DATA_DIR/mail instead. */
  smtp: SmtpSettings | undefined;
  /** The From of system mail (required with SMTP_URL). */
  mailFrom: string;
  /** The chat model (AI_BASE_URL, AI_API_KEY, AI_MODEL); undefined: features answer by their rules. */
  ai: AiSettings | undefined;
  /** Where the telephony provider's REST API is (TWILIO_API_BASE_URL, no trailing slash) and its time limit. */
  telephony: { baseUrl: string; timeoutMs: number };
  /** AES-256-GCM key for secrets at rest; undefined uses the key file in DATA_DIR. */
  secretsKey: Buffer | undefined;
  /** Older keys, still accepted for decryption while stored secrets are re-encrypted. */
  secretsPreviousKeys: Buffer[];
}

export interface S3Config {
  bucket: string;
  endpoint: string | undefined;
  region: string;
  /** Both keys or none (the SDK's default credential chain). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  forcePathStyle: boolean;
}

function parseS3(e: z.infer<typeof envSchema>): S3Config | undefined {
  const id = e.S3_ACCESS_KEY_ID;
  const secret = e.S3_SECRET_ACCESS_KEY;
  if (Boolean(id) !== Boolean(secret))
    throw new Error('Invalid configuration: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  if (!e.S3_BUCKET) return undefined;
  return {
    bucket: e.S3_BUCKET,
    endpoint: e.S3_ENDPOINT,
    region: e.S3_REGION,
    credentials: id && secret ? { accessKeyId: id, secretAccessKey: secret } : undefined,
    forcePathStyle: e.S3_FORCE_PATH_STYLE,
  };
}

/** AI_BASE_URL, AI_API_KEY and AI_MODEL together, or none of them. */
function parseAi(e: z.infer<typeof envSchema>): AiSettings | undefined {
  const set = [e.AI_BASE_URL, e.AI_API_KEY, e.AI_MODEL].filter((v) => v !== undefined && v !== '');
  if (set.length === 0) return undefined;
  if (!e.AI_BASE_URL || !e.AI_API_KEY || !e.AI_MODEL) {
    throw new Error('Invalid configuration: AI_BASE_URL, AI_API_KEY and AI_MODEL must be set together');
  }
  return {
    baseUrl: e.AI_BASE_URL.replace(/\/+$/, ''),
    apiKey: e.AI_API_KEY,
    model: e.AI_MODEL,
    timeoutMs: e.AI_TIMEOUT_MS,
  };
}

/** The sender of system mail in the embedded default, where nothing leaves the machine. */
const EMBEDDED_MAIL_FROM = 'CRM <no-reply@localhost>';

function parseTrustProxy(value: string): number {
  if (value === 'false' || value === '0' || value === '') return 0;
  if (value === 'true') return 1;
  const hops = Number(value);
  if (!Number.isInteger(hops) || hops < 0) {
    throw new Error(`TRUST_PROXY must be false, true or a hop count, got "${value}"`);
  }
  return hops;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  if (e.SMTP_URL && !e.MAIL_FROM) {
    throw new Error('Invalid configuration: MAIL_FROM: required when SMTP_URL is set');
  }
  return {
    env: Object.freeze({ ...env }),
    port: e.PORT,
    host: e.HOST,
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    databaseDirectUrl: e.DATABASE_DIRECT_URL,
    dbPoolMax: e.DB_POOL_MAX,
    dbTimeouts: {
      statementMs: e.DB_STATEMENT_TIMEOUT_MS,
      lockMs: e.DB_LOCK_TIMEOUT_MS,
      acquireMs: e.DB_POOL_ACQUIRE_TIMEOUT_MS,
    },
    redisUrl: e.REDIS_URL,
    jwtSecret: e.JWT_SECRET,
    adminToken: e.CRM_ADMIN_TOKEN,
    signupEnabled: e.SIGNUP_ENABLED,
    defaultPlan: e.DEFAULT_PLAN,
    trustProxyHops: parseTrustProxy(e.TRUST_PROXY),
    rateLimits: e.RATE_LIMITS === 'on',
    webhookRetryDelaysMs: e.WEBHOOK_RETRY_DELAYS_MS,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookConnectionsPerOrigin: e.WEBHOOK_CONNECTIONS_PER_ORIGIN,
    webhookAllowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    connectedAccountsAllowPrivateHosts: e.CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS,
    logLevel: e.LOG_LEVEL,
    trashRetentionDays: e.TRASH_RETENTION_DAYS,
    trashPurgeIntervalMs: e.TRASH_PURGE_INTERVAL_MS,
    workerConcurrency: e.WORKER_CONCURRENCY,
    mailRetentionDays: e.MAIL_RETENTION_DAYS,
    mcpAllowedOrigins: commaList(e.MCP_ALLOWED_ORIGINS),
    mcpAllowedHosts: e.MCP_ALLOWED_HOSTS,
    mcpDirectCalls: e.MCP_DIRECT_CALLS === 'on',
    corsAllowedOrigins: e.CORS_ALLOWED_ORIGINS,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    s3: parseS3(e),
    smtp: e.SMTP_URL,
    mailFrom: e.MAIL_FROM ?? EMBEDDED_MAIL_FROM,
    ai: parseAi(e),
    telephony: { baseUrl: e.TWILIO_API_BASE_URL.replace(/\/+$/, ''), timeoutMs: e.TWILIO_TIMEOUT_MS },
    secretsKey: e.SECRETS_KEY,
    secretsPreviousKeys: e.SECRETS_KEY_PREVIOUS,
  };
}

/**
 * Settings a deployment may have on purpose but must not have by accident: each is logged as a
 * warning when the services start (core/services.ts), so it stands out in the first lines.
 */
export function startupWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (!config.rateLimits) {
    warnings.push(
      'RATE_LIMITS=off: the request limits are switched off; only for benchmarks or behind a proxy that limits',
    );
  }
  if (!config.smtp) {
    warnings.push(
      `SMTP_URL is not set: system mail (invoices, estimates, proposals, password resets) is not sent, ` +
        `it is written as .eml files under ${config.dataDir}/mail and reported with delivery "file"`,
    );
  }
  return warnings;
}
