// The token endpoint (RFC 6749 section 3.2, OAuth 2.1) and revocation (RFC 7009). Form-encoded
// requests; answers are JSON with `Cache-Control: no-store`, errors in RFC 6749's form
// (`{error, error_description}`). Clients authenticate with client_secret_basic or
// client_secret_post when they hold a secret; public clients name their client_id and prove the
// code with PKCE. A code is single-use: presenting it again revokes what it issued. A refresh token
// rotates on every use: presenting a rotated one revokes its whole family, access tokens included.
// Revocations of a family commit in their own transaction before the error is answered.
import { and, eq, isNull } from 'drizzle-orm';
import type { PublicRequest, PublicRoute } from '../../core/area.ts';
import { hashToken } from '../../core/auth/tokens.ts';
import type { Executor } from '../../core/db/client.ts';
import { oauthTokens, organizations, users } from '../../core/db/schema.ts';
import { AppError } from '../../core/errors.ts';
import type { Services } from '../../core/services.ts';
import { type ClientRow, secretMatches } from './clients.ts';
import { forgetTokens, issueTokens, resourceOf, revokeFamily, s256, type TokenResponse } from './grants.ts';
import { parseScopeParam } from './scopes.ts';
import { oauthClients, oauthCodes, oauthInstallations, oauthRefreshTokens } from './tables.ts';

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

class OauthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OauthError';
  }
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...NO_STORE, ...headers },
  });
}

async function formOf(request: PublicRequest): Promise<Record<string, string>> {
  const type = request.raw.headers.get('content-type') ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new OauthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  let body: Record<string, unknown>;
  try {
    body = await request.body({ forms: true });
  } catch (err) {
    if (err instanceof AppError) throw new OauthError('invalid_request', err.body.message ?? err.body.error);
    throw err;
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) if (typeof value === 'string') out[key] = value;
  return out;
}

/** The client_id and secret of an HTTP Basic header (RFC 6749 section 2.3.1: each form-urlencoded). */
function basicCredentials(header: string | null): { id: string; secret: string } | null {
  if (!header?.toLowerCase().startsWith('basic ')) return null;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new OauthError('invalid_client', 'malformed Basic credentials', 401);
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')),
    };
  } catch {
    throw new OauthError('invalid_client', 'malformed Basic credentials', 401);
  }
}

/** The client making the request, authenticated when it holds a secret. */
async function authenticateClient(
  request: PublicRequest,
  form: Record<string, string>,
  services: Services,
): Promise<ClientRow> {
  const basic = basicCredentials(request.raw.headers.get('authorization'));
  const clientId = basic?.id ?? form.client_id;
  const secret = basic?.secret ?? form.client_secret;
  const challenge: Record<string, string> = basic ? { 'www-authenticate': 'Basic realm="crm"' } : {};
  if (!clientId) throw new OauthError('invalid_client', 'no client_id given', 401, challenge);
  if (basic && form.client_id !== undefined && form.client_id !== basic.id) {
    throw new OauthError('invalid_request', 'client_id differs from the authenticated client');
  }
  const [row] = await services.db.system
    .select()
    .from(oauthClients)
    .where(eq(oauthClients.clientId, clientId))
    .limit(1);
  if (!row) throw new OauthError('invalid_client', 'unknown client', 401, challenge);
  if (row.secretHash !== null) {
    if (secret === undefined || !secretMatches(row, secret)) {
      throw new OauthError('invalid_client', 'client authentication failed', 401, challenge);
    }
  } else if (secret !== undefined) {
    throw new OauthError('invalid_client', 'this client is public and has no secret', 401, challenge);
  }
  return row;
}

type Outcome = { ok: true; tokens: TokenResponse } | { ok: false; error: OauthError; revoked: string[] };

function refused(error: string, description: string, revoked: string[] = []): Outcome {
  return { ok: false, error: new OauthError(error, description), revoked };
}

/** Whether the user and organization of an installation may still receive tokens. */
async function holderActive(services: Services, userId: string): Promise<boolean> {
  const [row] = await services.db.system
    .select({ status: users.status, deletedAt: users.deletedAt, orgStatus: organizations.status })
    .from(users)
    .innerJoin(organizations, eq(organizations.id, users.orgId))
    .where(eq(users.id, userId))
    .limit(1);
  return row !== undefined && row.status === 'active' && row.deletedAt === null && row.orgStatus === 'active';
}

async function authorizationCode(
  form: Record<string, string>,
  client: ClientRow,
  services: Services,
  now: Date,
): Promise<Outcome> {
  const code = form.code ?? '';
  const verifier = form.code_verifier ?? '';
  if (!code) return refused('invalid_request', 'code is required');
  if (!VERIFIER.test(verifier))
    return refused('invalid_request', 'code_verifier is required (43-128 characters)');
  const db = services.db.system;
  const [row] = await db
    .select()
    .from(oauthCodes)
    .where(eq(oauthCodes.codeHash, hashToken(code)))
    .limit(1);
  if (!row || row.clientRef !== client.id) return refused('invalid_grant', 'unknown code');
  if (row.usedAt !== null) {
    const revoked = await db.transaction((tx) => revokeFamily(tx, row.id, now));
    return refused('invalid_grant', 'the code was already used; the tokens it issued are revoked', revoked);
  }
  if (row.expiresAt <= now) return refused('invalid_grant', 'the code has expired');
  if (form.redirect_uri !== row.redirectUri) return refused('invalid_grant', 'redirect_uri does not match');
  if (s256(verifier) !== row.codeChallenge) return refused('invalid_grant', 'code_verifier does not match');
  const base = services.config.publicBaseUrl;
  if (form.resource !== undefined && resourceOf(base, form.resource) !== row.resource) {
    return refused('invalid_target', 'resource differs from the one authorized');
  }
  return redeemOnce(
    services,
    client,
    { ...row, familyId: row.id },
    async (tx) => {
      const claimed = await tx
        .update(oauthCodes)
        .set({ usedAt: now })
        .where(and(eq(oauthCodes.id, row.id), isNull(oauthCodes.usedAt)))
        .returning({ id: oauthCodes.id });
      return claimed.length > 0;
    },
    'the code was already used; the tokens it issued are revoked',
    now,
  );
}

async function refreshToken(
  form: Record<string, string>,
  client: ClientRow,
  services: Services,
  now: Date,
): Promise<Outcome> {
  const token = form.refresh_token ?? '';
  if (!token) return refused('invalid_request', 'refresh_token is required');
  const db = services.db.system;
  const [row] = await db
    .select()
    .from(oauthRefreshTokens)
    .where(eq(oauthRefreshTokens.tokenHash, hashToken(token)))
    .limit(1);
  if (!row || row.clientRef !== client.id || row.revokedAt !== null) {
    return refused('invalid_grant', 'unknown or revoked refresh token');
  }
  if (row.rotatedAt !== null) {
    const revoked = await db.transaction((tx) => revokeFamily(tx, row.familyId, now));
    return refused(
      'invalid_grant',
      'the refresh token was already used; its whole family is revoked',
      revoked,
    );
  }
  if (row.expiresAt <= now) return refused('invalid_grant', 'the refresh token has expired');
  const base = services.config.publicBaseUrl;
  if (form.resource !== undefined && resourceOf(base, form.resource) !== row.resource) {
    return refused('invalid_target', 'resource differs from the one authorized');
  }
  const asked = parseScopeParam(form.scope);
  const beyond = asked.find((s) => !row.scopes.includes(s));
  if (beyond !== undefined) return refused('invalid_scope', `scope ${beyond} was not granted`);
  const scopes = asked.length > 0 ? asked : row.scopes;
  return redeemOnce(
    services,
    client,
    { ...row, scopes },
    async (tx) => {
      const claimed = await tx
        .update(oauthRefreshTokens)
        .set({ rotatedAt: now })
        .where(and(eq(oauthRefreshTokens.id, row.id), isNull(oauthRefreshTokens.rotatedAt)))
        .returning({ id: oauthRefreshTokens.id });
      return claimed.length > 0;
    },
    'the refresh token was already used; its whole family is revoked',
    now,
  );
}

/** What a code or a refresh token grants, read from its row. */
interface Redeemable {
  orgId: string;
  installationId: string;
  familyId: string;
  resource: string;
  scopes: readonly string[];
  toolsets: readonly string[];
}

/**
 * Issues tokens for a code or a refresh token, once. The installation's holder must still be active,
 * and `claim` marks the row used inside the issuing transaction: a row claimed before is a replay,
 * which revokes its whole family (the tokens issued from it too) and is refused with `replayed`.
 */
async function redeemOnce(
  services: Services,
  client: ClientRow,
  grant: Redeemable,
  claim: (tx: Executor) => Promise<boolean>,
  replayed: string,
  now: Date,
): Promise<Outcome> {
  const db = services.db.system;
  const [installation] = await db
    .select()
    .from(oauthInstallations)
    .where(eq(oauthInstallations.id, grant.installationId))
    .limit(1);
  if (!installation || !(await holderActive(services, installation.userId))) {
    return refused('invalid_grant', 'the grant is no longer valid');
  }
  const tokens = await db.transaction(async (tx) => {
    if (!(await claim(tx))) return null;
    return issueTokens(
      tx,
      {
        orgId: grant.orgId,
        userId: installation.userId,
        installationId: installation.id,
        clientRef: client.id,
        clientName: client.name,
        familyId: grant.familyId,
        resource: grant.resource === 'mcp' ? 'mcp' : 'api',
        scopes: grant.scopes,
        toolsets: grant.toolsets,
      },
      now,
    );
  });
  if (!tokens) {
    const revoked = await db.transaction((tx) => revokeFamily(tx, grant.familyId, now));
    return refused('invalid_grant', replayed, revoked);
  }
  return { ok: true, tokens };
}

function errorResponse(err: OauthError): Response {
  return json({ error: err.error, error_description: err.description }, err.status, err.headers);
}

async function token(request: PublicRequest, services: Services): Promise<Response> {
  const now = new Date();
  try {
    const form = await formOf(request);
    const client = await authenticateClient(request, form, services);
    const grant = form.grant_type;
    let outcome: Outcome;
    if (grant === 'authorization_code') outcome = await authorizationCode(form, client, services, now);
    else if (grant === 'refresh_token') outcome = await refreshToken(form, client, services, now);
    else
      throw new OauthError(
        'unsupported_grant_type',
        'grant_type must be authorization_code or refresh_token',
      );
    if (!outcome.ok) {
      await forgetTokens(services, outcome.revoked);
      return errorResponse(outcome.error);
    }
    return json(outcome.tokens);
  } catch (err) {
    if (err instanceof OauthError) return errorResponse(err);
    throw err;
  }
}

/** RFC 7009: revokes an access token (that token) or a refresh token (its family); always 200. */
async function revoke(request: PublicRequest, services: Services): Promise<Response> {
  const now = new Date();
  try {
    const form = await formOf(request);
    const client = await authenticateClient(request, form, services);
    const value = form.token ?? '';
    if (!value) throw new OauthError('invalid_request', 'token is required');
    const hash = hashToken(value);
    const db = services.db.system;
    const [refresh] = await db
      .select({ familyId: oauthRefreshTokens.familyId, clientRef: oauthRefreshTokens.clientRef })
      .from(oauthRefreshTokens)
      .where(eq(oauthRefreshTokens.tokenHash, hash))
      .limit(1);
    let revoked: string[] = [];
    if (refresh) {
      if (refresh.clientRef === client.id)
        revoked = await db.transaction((tx) => revokeFamily(tx, refresh.familyId, now));
    } else {
      const [access] = await db
        .select({ id: oauthTokens.id, clientRef: oauthInstallations.clientRef })
        .from(oauthTokens)
        .innerJoin(oauthInstallations, eq(oauthInstallations.id, oauthTokens.installationId))
        .where(eq(oauthTokens.tokenHash, hash))
        .limit(1);
      if (access && access.clientRef === client.id) {
        await db
          .update(oauthTokens)
          .set({ revokedAt: now })
          .where(and(eq(oauthTokens.id, access.id), isNull(oauthTokens.revokedAt)));
        revoked = [access.id];
      }
    }
    await forgetTokens(services, revoked);
    return new Response(null, { status: 200, headers: NO_STORE });
  } catch (err) {
    if (err instanceof OauthError) return errorResponse(err);
    throw err;
  }
}

export const tokenRoutes: PublicRoute[] = [
  { method: 'POST', path: '/oauth/token', handle: token },
  { method: 'POST', path: '/oauth/revoke', handle: revoke },
];
