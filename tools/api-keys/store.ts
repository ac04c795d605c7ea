// The API keys store: the key's record shape and the caller's own keys as the tools create, list,
// change, revoke and rotate them. Only a SHA-256 hash of a token is stored; the plain token exists
// only in the create or rotate result. A change that decides what a token may do drops the key's
// cached credential once the transaction commits.
import { and, desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { scopeCovered, scopesForNewKey, unknownScopes } from '../../core/access.ts';
import { generatePat, hashToken, tokenPrefix } from '../../core/auth/tokens.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { type ApiKeyRow, apiKeys } from '../../core/db/schema.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import type { Services } from '../../core/services.ts';
import type { ToolContext } from '../../core/tool.ts';

// The specification names this record's id field `id` (not `_id`).
export const apiKeySchema = z
  .object({
    id: z.string().describe('API key id (24 hex characters)'),
    label: z.string().describe("Label, unique among the owner's keys (revoked ones included)"),
    token_prefix: z.string().describe('First 8 characters of the token ("pat_" + 4 hex), to tell keys apart'),
    scopes: z.array(z.string()).describe('Scopes the key holds'),
    toolsets: z
      .array(z.string())
      .describe('MCP toolsets the key lists by default; empty means the server default (core)'),
    last_used_at: z.string().nullable().describe('Last authenticated use (ISO 8601), or null if never used'),
    revoked_at: z.string().nullable().describe('When the key was revoked (ISO 8601), or null while active'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change, including rotation (ISO 8601)'),
  })
  .describe('An API key (personal access token record); the token itself is never shown again');
export type ApiKeyRecord = z.infer<typeof apiKeySchema>;

/** Uses are batched in memory before they reach the row, so the pending time may be newer than the stored one. */
function serializeApiKey(row: ApiKeyRow, services: Services): ApiKeyRecord {
  const pending = services.usage.pendingFor(row.id);
  const stored = row.lastUsedAt;
  const lastUsed = pending && (!stored || pending > stored) ? pending : stored;
  return {
    id: row.id,
    label: row.label,
    token_prefix: row.tokenPrefix,
    scopes: [...row.scopes],
    toolsets: [...row.toolsets],
    last_used_at: iso(lastUsed),
    revoked_at: iso(row.revokedAt),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * A token-authenticated caller (PAT or OAuth) may only hand out known scopes it holds itself;
 * otherwise a narrow key could mint a broader one. A scope the server does not know grants nothing,
 * so it exceeds no one (docs/security.md "Scopes"). Sessions are not scope-limited.
 */
function assertScopesHeld(auth: AuthContext, scopes: readonly string[], known: readonly string[]): void {
  if (auth.scopes === null) return;
  const held = auth.scopes;
  const missing = scopes.find((s) => known.includes(s) && !scopeCovered(held, s));
  if (missing !== undefined) {
    throw new AppError('scope_missing', {
      error: `Token lacks required scope: ${missing}`,
      message: 'A token can only create or rotate keys whose scopes it holds itself',
      extra: { required_scope: missing },
    });
  }
}

/**
 * One of the caller's own keys, locked for the rest of the transaction; another user's key or
 * another organization's is a 404. The lock makes a change that checks `revoked_at` wait for a
 * concurrent revoke or rotate and decide on its committed result (no token handed out for a key
 * revoked meanwhile).
 */
async function lockOwnKey(db: Executor, auth: AuthContext, id: string): Promise<ApiKeyRow> {
  const [row] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.orgId, auth.orgId), eq(apiKeys.userId, auth.userId)))
    .limit(1)
    .for('update');
  if (!row) throw new AppError('not_found', { message: 'API key not found' });
  return row;
}

function labelTaken(): AppError {
  return new AppError('conflict', {
    message: 'You already have an API key with this label (revoked keys keep their label)',
    details: [{ field: 'label', message: 'already used by one of your keys', code: 'duplicate' }],
  });
}

type KeyContext = Pick<ToolContext, 'db' | 'auth' | 'now' | 'afterCommit' | 'services'>;

/**
 * A new key of the caller and its plain token; no scopes means the default ones. Scopes the server
 * does not know are stored as given (the specification: a misspelt scope is stored and grants
 * nothing) and named in `warnings`, so the caller learns of the typo.
 */
export async function insertApiKey(
  ctx: KeyContext,
  input: { label: string; scopes?: string[] | undefined; toolsets?: string[] | undefined },
  known: readonly string[],
): Promise<{ key: ApiKeyRecord; plain_token: string; warnings?: string[] }> {
  const scopes = scopesForNewKey(input.scopes);
  assertScopesHeld(ctx.auth, scopes, known);
  const token = generatePat();
  try {
    const [row] = await ctx.db
      .insert(apiKeys)
      .values({
        id: newId(ctx.now),
        orgId: ctx.auth.orgId,
        userId: ctx.auth.userId,
        label: input.label,
        tokenHash: hashToken(token),
        tokenPrefix: tokenPrefix(token),
        scopes,
        toolsets: input.toolsets ?? [],
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      .returning();
    if (!row) throw new Error('insert returned no API key');
    const unknown = unknownScopes(scopes, known);
    const created = { key: serializeApiKey(row, ctx.services), plain_token: token };
    if (unknown.length === 0) return created;
    return { ...created, warnings: unknown.map((s) => `unknown scope ${JSON.stringify(s)} grants nothing`) };
  } catch (err) {
    if (isUniqueViolation(err)) throw labelTaken();
    throw err;
  }
}

/** The caller's own keys, newest first, revoked ones included. */
export async function listOwnKeys(
  ctx: Pick<ToolContext, 'db' | 'auth' | 'services'>,
): Promise<ApiKeyRecord[]> {
  const rows = await ctx.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.orgId, ctx.auth.orgId), eq(apiKeys.userId, ctx.auth.userId)))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
  return rows.map((row) => serializeApiKey(row, ctx.services));
}

/** Changes the label and/or toolsets of an active key; the token stays. */
export async function writeApiKey(
  ctx: KeyContext,
  id: string,
  input: { label?: string | undefined; toolsets?: string[] | undefined },
): Promise<ApiKeyRecord> {
  const row = await lockOwnKey(ctx.db, ctx.auth, id);
  if (row.revokedAt !== null) {
    // A revoked key keeps its label reserved, so it cannot be renamed either.
    throw new AppError('invalid_operation', { message: 'A revoked API key cannot be changed' });
  }
  const changes: Partial<Pick<ApiKeyRow, 'label' | 'toolsets' | 'updatedAt'>> = {};
  if (input.label !== undefined && input.label !== row.label) changes.label = input.label;
  if (input.toolsets !== undefined && input.toolsets.join(',') !== row.toolsets.join(',')) {
    changes.toolsets = input.toolsets;
  }
  if (Object.keys(changes).length === 0) return serializeApiKey(row, ctx.services);
  changes.updatedAt = ctx.now;
  try {
    const [updated] = await ctx.db
      .update(apiKeys)
      .set(changes)
      .where(and(eq(apiKeys.id, row.id), eq(apiKeys.orgId, ctx.auth.orgId)))
      .returning();
    if (!updated) throw new AppError('not_found', { message: 'API key not found' });
    // The key's toolsets are part of the cached caller.
    ctx.afterCommit(() => ctx.services.authCache.invalidate({ credentialIds: [row.id] }));
    return serializeApiKey(updated, ctx.services);
  } catch (err) {
    if (isUniqueViolation(err)) throw labelTaken();
    throw err;
  }
}

/** Revokes a key; an already revoked key is left as it is. */
export async function revokeKey(ctx: KeyContext, id: string): Promise<void> {
  const row = await lockOwnKey(ctx.db, ctx.auth, id);
  if (row.revokedAt === null) {
    await ctx.db
      .update(apiKeys)
      .set({ revokedAt: ctx.now, updatedAt: ctx.now })
      .where(and(eq(apiKeys.id, row.id), eq(apiKeys.orgId, ctx.auth.orgId)));
    ctx.afterCommit(() => ctx.services.authCache.invalidate({ credentialIds: [row.id] }));
  }
}

/** A new token for an active key; the old one stops working. */
export async function rotateKey(
  ctx: KeyContext,
  id: string,
  known: readonly string[],
): Promise<{ key: ApiKeyRecord; plain_token: string }> {
  const row = await lockOwnKey(ctx.db, ctx.auth, id);
  if (row.revokedAt !== null) {
    throw new AppError('invalid_operation', { message: 'A revoked API key cannot be rotated' });
  }
  // Rotating hands out a usable token, so it is held to the same rule as creating one.
  assertScopesHeld(ctx.auth, row.scopes, known);
  const token = generatePat();
  const [updated] = await ctx.db
    .update(apiKeys)
    .set({ tokenHash: hashToken(token), tokenPrefix: tokenPrefix(token), updatedAt: ctx.now })
    .where(and(eq(apiKeys.id, row.id), eq(apiKeys.orgId, ctx.auth.orgId)))
    .returning();
  if (!updated) throw new AppError('not_found', { message: 'API key not found' });
  ctx.afterCommit(() => ctx.services.authCache.invalidate({ credentialIds: [row.id] }));
  return { key: serializeApiKey(updated, ctx.services), plain_token: token };
}
