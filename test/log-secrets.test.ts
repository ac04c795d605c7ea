// Locks in that no password, password hash, token, token hash or webhook secret reaches a log line, at trace level, through unsafe input, failed inserts and credentials in URLs.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { hashToken } from '../core/auth/tokens.ts';
import { apiKeys, users } from '../core/db/schema.ts';
import { AppError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { createLogger } from '../core/logger.ts';
import { fileTest } from './fixtures/file-test.ts';
import type { TestContext, TestOrg } from './helpers.ts';

const ADMIN_TOKEN = 'admin-token-for-log-secrets-test';
const PASSWORD = 'Sup3r-Secret-Passw0rd!';
const WEBHOOK_SECRET = 'whsec_bG9nLXNlY3JldHMtdGVzdC13ZWJob29rLXNlY3JldA==';

const lines: string[] = [];
const logger = createLogger('trace', {
  write(msg: string) {
    lines.push(msg);
  },
});

const test = fileTest({
  env: { CRM_ADMIN_TOKEN: ADMIN_TOKEN },
  options: { logger, withoutRateLimits: true },
  plan: 'enterprise',
})
  .extend('pat', { scope: 'file' }, async ({ t, org }) =>
    t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']),
  )
  /** Everything that must never appear in a log line. */
  .extend('secrets', { scope: 'file' }, async ({ t, org, pat }) => {
    const member = await t.createUser(org.orgId, 'member', { password: PASSWORD });
    const [row] = await t.services.db.system.select().from(users).where(eq(users.id, member.userId));
    return [
      PASSWORD,
      row?.passwordHash as string,
      pat.token,
      hashToken(pat.token),
      org.token,
      ADMIN_TOKEN,
      WEBHOOK_SECRET,
    ];
  });

function leaked(secrets: string[]): string[] {
  return lines.filter((line) => secrets.some((secret) => line.includes(secret)));
}

function send(t: TestContext, org: TestOrg, method: string, path: string, body: string, token = org.token) {
  return t.app.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
}

describe('the log at trace level', () => {
  test('carries no secret when bodies holding secrets also hold unsafe input', async ({
    t,
    org,
    secrets,
  }) => {
    lines.length = 0;
    const poisons = [
      '"bad\\u0000text"',
      '"bad\\ud800text"',
      '1e309',
      `${'['.repeat(5000)}1${']'.repeat(5000)}`,
    ];
    for (const poison of poisons) {
      const sends = [
        send(
          t,
          org,
          'POST',
          '/api/v1/auth/signup',
          `{"organization_name":"Org","name":"Ann","email":"ann-${newId()}@example.test","password":"${PASSWORD}","x":${poison}}`,
        ),
        send(t, org, 'POST', '/api/v1/auth/login', `{"email":${poison},"password":"${PASSWORD}"}`),
        send(t, org, 'POST', '/api/v1/auth/refresh', `{"refresh_token":${poison}}`),
        send(
          t,
          org,
          'POST',
          '/api/v1/users',
          `{"email":"dee-${newId()}@example.test","name":${poison},"role":"member","password":"${PASSWORD}"}`,
        ),
        send(t, org, 'POST', '/api/v1/settings/api-keys', `{"label":${poison},"scopes":["read:leads"]}`),
        send(
          t,
          org,
          'POST',
          '/api/v1/webhooks',
          `{"name":${poison},"url":"https://example.com/h","events":["lead.created"],"secret":"${WEBHOOK_SECRET}"}`,
        ),
        send(
          t,
          org,
          'POST',
          '/admin/v1/organizations',
          `{"name":${poison},"plan":"free","owner":{"name":"Bo","email":"bo@example.test","password":"${PASSWORD}"}}`,
          ADMIN_TOKEN,
        ),
      ];
      for (const res of await Promise.all(sends)) expect(res.status).toBeLessThan(500);
    }
    expect(lines.length).toBeGreaterThan(0);
    expect(leaked(secrets)).toEqual([]);
  });

  test('carries no secret when inserts fail: a duplicate user with a password, a conflicting API key', async ({
    t,
    org,
    pat,
    secrets,
  }) => {
    lines.length = 0;
    const email = `dup-${newId()}@example.test`;
    for (let i = 0; i < 2; i++) {
      const res = await send(
        t,
        org,
        'POST',
        '/api/v1/users',
        JSON.stringify({ email, name: 'Dup', role: 'member', password: PASSWORD }),
      );
      expect(res.status).toBeLessThan(500);
    }
    // A failed insert below the tools, logged the way every failure is (invoke.ts, rest/errors.ts):
    // drizzle's error message and `params` carry the e-mail, the password hash and the token hash.
    const db = t.services.db.system;
    const [row] = await db.select().from(users).where(eq(users.email, email));
    const failures: unknown[] = [];
    await db
      .insert(users)
      .values({ ...(row as typeof users.$inferInsert), id: newId() })
      .catch((err: unknown) => failures.push(err));
    await db
      .insert(apiKeys)
      .values({
        id: newId(),
        orgId: org.orgId,
        userId: org.ownerId,
        label: 'clash',
        tokenHash: hashToken(pat.token),
        tokenPrefix: 'crm_',
        scopes: [],
      })
      .catch((err: unknown) => failures.push(err));
    expect(failures).toHaveLength(2);
    for (const err of failures) {
      t.services.logger.error({ err }, 'tool failed');
      t.services.logger.error({ error: err, cause: err }, 'under other keys');
      t.services.logger.error({ err: new AppError('internal', { cause: err }) }, 'wrapped');
    }
    expect(lines.filter((l) => l.includes('"level":50')).length).toBeGreaterThanOrEqual(6);
    // The log still says what failed: the constraint and the SQLSTATE.
    expect(lines.join('\n')).toContain('23505');
    expect(leaked(secrets)).toEqual([]);
  });

  test('carries no credential sent in a URL or a header', async ({ t, org, pat, secrets }) => {
    lines.length = 0;
    for (const path of [
      `/api/v1/leads?access_token=${pat.token}`,
      `/api/v1/leads?q=${pat.token}`,
      `/mcp?token=${pat.token}`,
      `/admin/v1/organizations/${org.orgId}?key=${ADMIN_TOKEN}`,
    ]) {
      const res = await t.app.request(path, { headers: { authorization: `Bearer ${pat.token}` } });
      expect(res.status).toBeLessThan(500);
    }
    expect(lines.length).toBeGreaterThan(0);
    expect(leaked(secrets)).toEqual([]);
  });
});
