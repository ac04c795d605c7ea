// Locks in the authentication matrix: every token kind against every failure, with the exact 401/403/400 bodies.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { describe, expect } from 'vitest';
import { createOauthToken, revokeOauthToken, updateOrganization } from '../core/admin.ts';
import { signSession } from '../core/auth/jwt.ts';
import { generateOauthToken, generatePat } from '../core/auth/tokens.ts';
import { apiKeys, oauthTokens, users } from '../core/db/schema.ts';
import { CATALOGUE } from '../tools/index.ts';
import { fileTest } from './fixtures/file-test.ts';
import { json, type TestContext, type TestOrg } from './helpers.ts';

const AUTH_REQUIRED = { error: 'Authentication required', code: 'authentication_required' };
const INVALID_OR_EXPIRED = { error: 'Invalid or expired token', code: 'invalid_token' };
const INVALID_JWT = { error: 'Invalid token', code: 'invalid_jwt' };
const JWT_EXPIRED = { error: 'Token expired', code: 'token_expired' };
const ORG_INACTIVE = { error: 'Organization is inactive', code: 'organization_inactive' };

type Tokens = Record<string, string>;

async function oauthFor(t: TestContext, userId: string, extra: Record<string, unknown> = {}) {
  return createOauthToken(t.services.db, {
    user_id: userId,
    app_name: 'Matrix app',
    scopes: ['read:leads'],
    ...extra,
  });
}

/** Every token the matrix needs, built once. */
async function buildTokens(t: TestContext, org: TestOrg): Promise<Tokens> {
  const tok: Tokens = {};
  tok.session = org.token;
  tok.pat = (await t.createPat(org.orgId, org.ownerId, ['read:leads'])).token;
  tok.oauth = (await oauthFor(t, org.ownerId)).token;

  // Session JWTs that must fail.
  tok.jwtBadSignature = await signSession(randomBytes(32), { sub: org.ownerId, org: org.orgId });
  const past = Math.floor(Date.now() / 1000) - 3600;
  tok.jwtExpired = await new SignJWT({ org: org.orgId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(org.ownerId)
    .setIssuedAt(past)
    .setExpirationTime(past + 900)
    .sign(t.services.jwtKey);
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  tok.jwtAlgNone = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: org.ownerId, org: org.orgId })}.`;

  // PATs that must fail.
  tok.patUnknown = generatePat();
  const revoked = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
  await t.services.db.system
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(eq(apiKeys.id, revoked.keyId));
  tok.patRevoked = revoked.token;

  // OAuth tokens that must fail.
  tok.oauthUnknown = generateOauthToken();
  const revokedOauth = await oauthFor(t, org.ownerId);
  await revokeOauthToken(t.services.db, revokedOauth.oauth_token._id);
  tok.oauthRevoked = revokedOauth.token;
  const expiring = await oauthFor(t, org.ownerId, { expires_in_seconds: 60 });
  await t.services.db.system
    .update(oauthTokens)
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where(eq(oauthTokens.id, expiring.oauth_token._id));
  tok.oauthExpired = expiring.token;

  // Every kind of a user who is then deactivated.
  const member = await t.createUser(org.orgId, 'member');
  tok.sessionDeactivated = member.token;
  tok.patDeactivated = (await t.createPat(org.orgId, member.userId, ['read:leads'])).token;
  tok.oauthDeactivated = (await oauthFor(t, member.userId)).token;
  await t.services.db.system
    .update(users)
    .set({ status: 'deactivated', deactivatedAt: new Date() })
    .where(eq(users.id, member.userId));

  // Every kind for an inactive and a suspended organization.
  for (const status of ['inactive', 'suspended'] as const) {
    const other = await t.createOrg();
    tok[`session_${status}`] = other.token;
    tok[`pat_${status}`] = (await t.createPat(other.orgId, other.ownerId, ['read:leads'])).token;
    tok[`oauth_${status}`] = (await oauthFor(t, other.ownerId)).token;
    await updateOrganization(t.services.db, other.orgId, { status }, CATALOGUE.plans.features);
  }
  return tok;
}

const test = fileTest({ plan: 'starter' }).extend('tok', { scope: 'file' }, async ({ t, org }) =>
  buildTokens(t, org),
);

async function me(t: TestContext, authorization: string | undefined, query = '') {
  return t.request('GET', `/api/v1/me${query}`, {
    headers: authorization === undefined ? {} : { authorization },
  });
}

const bearer = (name: string) => (tok: Tokens) => `Bearer ${tok[name]}`;

describe('valid tokens', () => {
  test.for([
    ['session', 'session', null],
    ['pat', 'pat', ['read:leads']],
    ['oauth', 'oauth', ['read:leads']],
  ] as const)(
    'a valid %s token answers 200 with token_kind %s',
    async ([name, kind, scopes], { t, org, tok }) => {
      const res = await me(t, bearer(name)(tok));
      expect(res.status).toBe(200);
      expect(await json(res)).toMatchObject({
        token_kind: kind,
        scopes,
        user: { _id: org.ownerId },
        organization: { _id: org.orgId },
      });
    },
  );
});

describe('401 failures', () => {
  const cases: [string, (tok: Tokens) => string | undefined, Record<string, string>][] = [
    ['header missing', () => undefined, AUTH_REQUIRED],
    ['Basic scheme', () => 'Basic dXNlcjpwYXNz', AUTH_REQUIRED],
    ['Basic scheme carrying a valid PAT', (tok) => `Basic ${tok.pat}`, AUTH_REQUIRED],
    ['Bearer with no token', () => 'Bearer ', AUTH_REQUIRED],
    ['token without a scheme', (tok) => tok.pat, AUTH_REQUIRED],
    ['JWT with a bad signature', bearer('jwtBadSignature'), INVALID_JWT],
    ['JWT past expiry', bearer('jwtExpired'), JWT_EXPIRED],
    ['unsigned JWT (alg none)', bearer('jwtAlgNone'), INVALID_JWT],
    // Routed to the JWT validator by its shape: a PAT lookup would answer "Invalid or expired token".
    ['JWT-shaped garbage a.b.c', () => 'Bearer a.b.c', INVALID_JWT],
    ['session of a deactivated user', bearer('sessionDeactivated'), INVALID_OR_EXPIRED],
    ['unknown PAT', bearer('patUnknown'), INVALID_OR_EXPIRED],
    ['revoked PAT', bearer('patRevoked'), INVALID_OR_EXPIRED],
    ['PAT of a deactivated user', bearer('patDeactivated'), INVALID_OR_EXPIRED],
    ['unknown OAuth token', bearer('oauthUnknown'), INVALID_OR_EXPIRED],
    ['revoked OAuth token', bearer('oauthRevoked'), INVALID_OR_EXPIRED],
    ['expired OAuth token', bearer('oauthExpired'), INVALID_OR_EXPIRED],
    ['OAuth token of a deactivated user', bearer('oauthDeactivated'), INVALID_OR_EXPIRED],
    ['token of no known shape', () => 'Bearer not-a-token', INVALID_OR_EXPIRED],
  ];

  test.for(cases)('%s -> 401 with the exact body', async ([_name, header, body], { t, tok }) => {
    const res = await me(t, header(tok));
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual(body);
  });
});

describe('inactive and suspended organizations', () => {
  test.for([
    'session_inactive',
    'pat_inactive',
    'oauth_inactive',
    'session_suspended',
    'pat_suspended',
    'oauth_suspended',
  ])('%s -> 403 Organization is inactive', async (name, { t, tok }) => {
    const res = await me(t, bearer(name)(tok));
    expect(res.status).toBe(403);
    expect(await json(res)).toEqual(ORG_INACTIVE);
  });
});

describe('tokens in the URL', () => {
  test.for<[string, string]>([
    ['access_token', 'pat'],
    ['api_key', 'pat'],
    ['access_token', 'session'],
    ['token', 'oauth'],
  ])('?%s=<valid %s> is never used: 401 Authentication required', async ([param, kind], { t, tok }) => {
    const res = await me(t, undefined, `?${param}=${encodeURIComponent(tok[kind] ?? '')}`);
    expect(res.status).toBe(401);
    expect(await json(res)).toMatchObject({ error: 'Authentication required' });
  });

  test('ignores a URL token alongside a valid Authorization header: the header decides', async ({
    t,
    tok,
  }) => {
    const res = await me(t, bearer('pat')(tok), `?access_token=${tok.pat}`);
    expect(res.status).toBe(200);
  });
});
