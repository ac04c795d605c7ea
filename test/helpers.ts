// Builds a real app for a test file: PGlite in memory by default, or a fresh database on the
// PostgreSQL server named by TEST_DATABASE_URL (the services suite). Fixtures go through core
// functions; the behaviour under test goes through app.request() or a real client.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import type { Role } from '../core/access.ts';
import { signSession } from '../core/auth/jwt.ts';
import { generatePat, hashToken, tokenPrefix } from '../core/auth/tokens.ts';
import { type Config, loadConfig, type Plan } from '../core/config.ts';
import { apiKeys } from '../core/db/schema.ts';
import { newId } from '../core/ids.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import { createOrganizationWithOwner } from '../core/organizations.ts';
import { createServices, type Services } from '../core/services.ts';
import { insertUser } from '../core/users.ts';
import { createApp } from '../http/app.ts';
import { type BackgroundWork, startBackgroundWork } from '../workers/runtime.ts';
import { createDatabase } from './support/postgres-admin.ts';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export const onPostgres = Boolean(TEST_DATABASE_URL);

/**
 * Creates a database on the test server and returns its URL and a function that drops it: a copy of
 * the run's migrated template (test/setup/database-template.ts) unless `empty` asks for a bare one.
 */
export async function createScratchDatabase(
  adminUrl: string,
  options: { empty?: boolean } = {},
): Promise<{ url: string; drop: () => Promise<void> }> {
  const template = options.empty ? undefined : inject('templateDatabase');
  if (!options.empty && !template) throw new Error('No template database: the global setup did not run');
  const { url, drop } = await createDatabase(adminUrl, 'crm_test', template);
  return { url, drop };
}

export interface TestOrg {
  orgId: string;
  ownerId: string;
  ownerEmail: string;
  /** Session JWT of the owner. */
  token: string;
}

export interface TestContext {
  app: ReturnType<typeof createApp>;
  services: Services;
  config: Config;
  request(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  createOrg(options?: { plan?: Plan; name?: string }): Promise<TestOrg>;
  createUser(
    orgId: string,
    role: Role,
    options?: { email?: string; password?: string },
  ): Promise<{ userId: string; token: string; email: string }>;
  sessionToken(userId: string, orgId: string): Promise<string>;
  createPat(
    orgId: string,
    userId: string,
    scopes: string[],
    label?: string,
  ): Promise<{ token: string; keyId: string }>;
  close(): Promise<void>;
}

let seq = 0;
const uniqueEmail = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${seq++}-${randomBytes(3).toString('hex')}@example.test`;

export interface TestContextOptions {
  /** The services' logger; silent by default. Give one writing to a captured stream to read the logs. */
  logger?: Logger;
  /**
   * Leave the request limits out, for files that send many requests from one (in-process) address
   * to test something else; test/rate-limits.test.ts covers the limits themselves.
   */
  withoutRateLimits?: boolean;
  /**
   * Run the background side (relay, sweeper, job workers with the real delivery handler) for this
   * context, as `crm serve` does; stopped by close(). `{ ca }` makes deliveries trust a local
   * receiver's self-signed certificate (test/support/https-receiver.ts).
   */
  withWorkers?: boolean | { ca?: string };
}

let pgliteImage: Promise<Blob | undefined> | undefined;

/** The run's migrated PGlite image, read once per worker (undefined outside the global setup). */
function migratedPgliteImage(): Promise<Blob | undefined> {
  pgliteImage ??= (async () => {
    const path = inject('pgliteImagePath');
    return path ? new Blob([await readFile(path)]) : undefined;
  })();
  return pgliteImage;
}

export async function createTestContext(
  env: Record<string, string> = {},
  options: TestContextOptions = {},
): Promise<TestContext> {
  const scratch = TEST_DATABASE_URL ? await createScratchDatabase(TEST_DATABASE_URL) : undefined;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: '/nonexistent',
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
    ...env,
  });
  const services = await createServices(config, {
    inMemory: true,
    pgliteImage: scratch ? undefined : await migratedPgliteImage(),
    logger: options.logger ?? createLogger('silent'),
    withoutRateLimits: options.withoutRateLimits ?? false,
  });
  const app = createApp(services);
  const workers = options.withWorkers;
  const background: BackgroundWork | undefined = workers
    ? await startBackgroundWork(services, {
        relayIntervalMs: 50,
        sweepIntervalMs: 1000,
        deliveryOptions: workers === true ? {} : workers,
      })
    : undefined;

  const ctx: TestContext = {
    app,
    services,
    config,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      return app.request(path, { method, headers, body });
    },
    async createOrg(options = {}) {
      const email = uniqueEmail('owner');
      const { organization, owner } = await services.db.transaction((tx) =>
        createOrganizationWithOwner(tx, {
          name: options.name ?? 'Test Org',
          plan: options.plan ?? 'free',
          owner: { name: 'Owner', email, password: 'correct horse battery' },
        }),
      );
      return {
        orgId: organization.id,
        ownerId: owner.id,
        ownerEmail: email,
        token: await ctx.sessionToken(owner.id, organization.id),
      };
    },
    async createUser(orgId, role, options = {}) {
      const email = options.email ?? uniqueEmail(role);
      const user = await insertUser(services.db.system, {
        orgId,
        role,
        email,
        name: `${role} user`,
        password: options.password ?? 'correct horse battery',
      });
      return { userId: user.id, email, token: await ctx.sessionToken(user.id, orgId) };
    },
    sessionToken: (userId, orgId) => signSession(services.jwtKey, { sub: userId, org: orgId }),
    async createPat(orgId, userId, scopes, label) {
      const token = generatePat();
      const keyId = newId();
      await services.db.system.insert(apiKeys).values({
        id: keyId,
        orgId,
        userId,
        label: label ?? `key ${keyId}`,
        tokenHash: hashToken(token),
        tokenPrefix: tokenPrefix(token),
        scopes,
      });
      return { token, keyId };
    },
    async close() {
      await background?.stop();
      await services.close();
      await scratch?.drop();
    },
  };
  return ctx;
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}
