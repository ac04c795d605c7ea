// Turns an Authorization header into an AuthContext. The token's shape picks exactly one
// validator (JWT, PAT, OAuth); there is no fall-through, so a forged JWT can never be tried as a key.
import { and, eq, isNull } from 'drizzle-orm';
import { isRole } from '../access.ts';
import type { AuthContext, TokenResource } from '../auth-context.ts';
import { apiKeys, oauthTokens, organizations, users } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { VerifiedCredential } from './cache.ts';
import { verifySession } from './jwt.ts';
import { bearerToken, classifyToken, hashToken } from './tokens.ts';

interface Principal {
  user: { id: string; role: string; status: string; deletedAt: Date | null };
  org: { id: string; plan: string; status: string; disabledFeatures: string[] };
}

/**
 * Common checks once the token itself is good: a deactivated or deleted user's tokens stop working
 * (401), an inactive or suspended organization gets 403 "Organization is inactive".
 */
function toContext(
  p: Principal,
  kind: AuthContext['tokenKind'],
  scopes: readonly string[] | null,
  credentialId: string | null,
  toolsets: readonly string[] | null = null,
): AuthContext {
  if (p.user.status !== 'active' || p.user.deletedAt !== null || !isRole(p.user.role)) {
    throw new AppError('invalid_token');
  }
  if (p.org.status !== 'active') throw new AppError('organization_inactive');
  return {
    tokenKind: kind,
    orgId: p.org.id,
    userId: p.user.id,
    role: p.user.role,
    plan: p.org.plan,
    disabledFeatures: p.org.disabledFeatures,
    scopes,
    credentialId,
    toolsets,
  };
}

const principalColumns = {
  user: { id: users.id, role: users.role, status: users.status, deletedAt: users.deletedAt },
  org: {
    id: organizations.id,
    plan: organizations.plan,
    status: organizations.status,
    disabledFeatures: organizations.disabledFeatures,
  },
};

// The JWT itself is verified on every request; only the user and organization lookup is cached.
async function authenticateSession(token: string, services: Services, now: Date): Promise<AuthContext> {
  const claims = await verifySession(services.jwtKey, token, now);
  return services.authCache.lookup(`session:${claims.org}:${claims.sub}`, now, async () => {
    const [row] = await services.db.system
      .select(principalColumns)
      .from(users)
      .innerJoin(organizations, eq(organizations.id, users.orgId))
      .where(and(eq(users.id, claims.sub), eq(users.orgId, claims.org)))
      .limit(1);
    if (!row) throw new AppError('invalid_token');
    return { auth: toContext(row, 'session', null, null), expiresAt: null };
  });
}

async function authenticatePat(token: string, services: Services, now: Date): Promise<AuthContext> {
  const tokenHash = hashToken(token);
  const auth = await services.authCache.lookup(`pat:${tokenHash}`, now, () => loadPat(tokenHash, services));
  if (auth.credentialId) services.usage.record('pat', auth.credentialId, now);
  return auth;
}

async function loadPat(tokenHash: string, services: Services): Promise<VerifiedCredential> {
  const [row] = await services.db.system
    .select({
      ...principalColumns,
      key: { id: apiKeys.id, scopes: apiKeys.scopes, toolsets: apiKeys.toolsets },
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .innerJoin(organizations, eq(organizations.id, apiKeys.orgId))
    .where(and(eq(apiKeys.tokenHash, tokenHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (!row) throw new AppError('invalid_token');
  return { auth: toContext(row, 'pat', row.key.scopes, row.key.id, row.key.toolsets), expiresAt: null };
}

async function authenticateOauth(token: string, services: Services, now: Date): Promise<AuthContext> {
  const tokenHash = hashToken(token);
  const auth = await services.authCache.lookup(`oauth:${tokenHash}`, now, () =>
    loadOauth(tokenHash, services, now),
  );
  if (auth.credentialId) services.usage.record('oauth', auth.credentialId, now);
  return auth;
}

async function loadOauth(tokenHash: string, services: Services, now: Date): Promise<VerifiedCredential> {
  const [row] = await services.db.system
    .select({
      ...principalColumns,
      token: {
        id: oauthTokens.id,
        scopes: oauthTokens.scopes,
        expiresAt: oauthTokens.expiresAt,
        resource: oauthTokens.resource,
        toolsets: oauthTokens.toolsets,
      },
    })
    .from(oauthTokens)
    .innerJoin(users, eq(users.id, oauthTokens.userId))
    .innerJoin(organizations, eq(organizations.id, oauthTokens.orgId))
    .where(and(eq(oauthTokens.tokenHash, tokenHash), isNull(oauthTokens.revokedAt)))
    .limit(1);
  if (!row || (row.token.expiresAt && row.token.expiresAt <= now)) throw new AppError('invalid_token');
  const auth = toContext(row, 'oauth', row.token.scopes, row.token.id, row.token.toolsets);
  const resource = row.token.resource;
  return {
    auth: { ...auth, resource: resource === 'mcp' || resource === 'api' ? resource : null },
    expiresAt: row.token.expiresAt,
  };
}

/**
 * The caller behind an Authorization header. With `resource`, an OAuth token issued for the other
 * resource (RFC 8707: a token for /mcp on /api/v1, or the reverse) is refused as invalid; tokens
 * without a bound resource (sessions, PATs, operator-minted OAuth tokens) pass.
 */
export async function authenticate(
  header: string | undefined | null,
  services: Services,
  now = new Date(),
  resource?: TokenResource,
): Promise<AuthContext> {
  const token = bearerToken(header);
  switch (classifyToken(token)) {
    case 'jwt':
      return authenticateSession(token, services, now);
    case 'pat':
      return authenticatePat(token, services, now);
    case 'oauth': {
      const auth = await authenticateOauth(token, services, now);
      if (resource && auth.resource && auth.resource !== resource) {
        throw new AppError('invalid_token', { message: 'This token was issued for another resource' });
      }
      return auth;
    }
    case 'unknown':
      throw new AppError('invalid_token');
  }
}
