// What a grant issues and how it ends: an access token of the specification's OAuth shape (64 hex,
// a row of the kernel's oauth_tokens, validated by core/auth/authenticate.ts) with a refresh token
// of the same family, and the revocations (a family on reuse, an installation, a client). Every
// revocation drops the revoked access tokens from the credential cache on every node
// (core/auth/cache.ts) after its commit, before the answer.
import { createHash } from 'node:crypto';
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { generateOauthToken, generateRefreshToken, hashToken } from '../../core/auth/tokens.ts';
import type { TokenResource } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { oauthTokens } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import type { Services } from '../../core/services.ts';
import { oauthRefreshTokens } from './tables.ts';

const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;
/** Between the 60 s and 10 min the flow allows: time to go back to the app and redeem it. */
export const CODE_TTL_SECONDS = 5 * 60;

/** The stored resource and the URL a client names it by (RFC 8707). */
export function resourceUrl(base: string, resource: TokenResource): string {
  return resource === 'mcp' ? `${base}/mcp` : `${base}/api/v1`;
}

/** The resource a `resource` parameter names, or null when it names neither; absent is the API. */
export function resourceOf(base: string, value: string | undefined | null): TokenResource | null {
  if (value === undefined || value === null || value === '') return 'api';
  const trimmed = value.replace(/\/+$/, '');
  if (trimmed === `${base}/mcp`) return 'mcp';
  if (trimmed === `${base}/api/v1`) return 'api';
  return null;
}

/** BASE64URL(SHA-256(verifier)), the S256 code challenge of RFC 7636. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

interface GrantFacts {
  orgId: string;
  userId: string;
  installationId: string;
  clientRef: string;
  clientName: string;
  familyId: string;
  resource: TokenResource;
  scopes: readonly string[];
  toolsets: readonly string[];
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Stores a new access token and refresh token of the grant's family, and answers them once. */
export async function issueTokens(tx: Executor, grant: GrantFacts, now: Date): Promise<TokenResponse> {
  const access = generateOauthToken();
  const refresh = generateRefreshToken();
  await tx.insert(oauthTokens).values({
    id: newId(now),
    orgId: grant.orgId,
    userId: grant.userId,
    appName: grant.clientName,
    tokenHash: hashToken(access),
    scopes: [...grant.scopes],
    resource: grant.resource,
    toolsets: [...grant.toolsets],
    installationId: grant.installationId,
    familyId: grant.familyId,
    expiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000),
    createdAt: now,
  });
  await tx.insert(oauthRefreshTokens).values({
    id: newId(now),
    orgId: grant.orgId,
    tokenHash: hashToken(refresh),
    familyId: grant.familyId,
    installationId: grant.installationId,
    clientRef: grant.clientRef,
    resource: grant.resource,
    scopes: [...grant.scopes],
    toolsets: [...grant.toolsets],
    expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_SECONDS * 1000),
    createdAt: now,
  });
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    refresh_token: refresh,
    scope: grant.scopes.join(' '),
  };
}

/** Revokes the live access tokens matching `where`; answers their ids for the cache. */
async function revokeAccessTokens(db: Executor, where: ReturnType<typeof eq>, now: Date): Promise<string[]> {
  const rows = await db
    .update(oauthTokens)
    .set({ revokedAt: now })
    .where(and(where, isNull(oauthTokens.revokedAt)))
    .returning({ id: oauthTokens.id });
  return rows.map((r) => r.id);
}

/** Revokes every token of a family (a reused code or rotated refresh token); answers the access token ids. */
export async function revokeFamily(db: Executor, familyId: string, now: Date): Promise<string[]> {
  await db
    .update(oauthRefreshTokens)
    .set({ revokedAt: now })
    .where(and(eq(oauthRefreshTokens.familyId, familyId), isNull(oauthRefreshTokens.revokedAt)));
  return revokeAccessTokens(db, eq(oauthTokens.familyId, familyId), now);
}

/** Revokes every access token of the given installations (their refresh tokens go with the rows). */
export async function revokeInstallationTokens(
  db: Executor,
  installationIds: readonly string[],
  now: Date,
): Promise<string[]> {
  if (installationIds.length === 0) return [];
  return revokeAccessTokens(db, inArray(oauthTokens.installationId, [...installationIds]), now);
}

/** Drops revoked access tokens from the credential cache, here and on every node. */
export async function forgetTokens(services: Services, tokenIds: readonly string[]): Promise<void> {
  if (tokenIds.length > 0) await services.authCache.invalidate({ credentialIds: tokenIds });
}
