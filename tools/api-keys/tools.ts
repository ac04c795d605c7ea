// Personal access tokens (API keys) of the caller: create, list, revoke, rotate. Only a SHA-256 hash
// of a token is stored, so the plain token is shown once, in the create or rotate response.
import { and, desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { KNOWN_SCOPES, scopeCovered, scopesForNewKey } from '../../core/access.ts';
import { generatePat, hashToken, tokenPrefix } from '../../core/auth/tokens.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { type ApiKeyRow, apiKeys } from '../../core/db/schema.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso, messageOutput, objectId } from '../../core/schemas.ts';
import type { Services } from '../../core/services.ts';
import { defineTool } from '../../core/tool.ts';
import { TOOLSET_NAMES } from '../../core/toolsets.ts';

const TOOLSET = 'settings';

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
export function serializeApiKey(row: ApiKeyRow, services: Services): ApiKeyRecord {
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

const keyWithToken = z.object({
  key: apiKeySchema,
  plain_token: z
    .string()
    .describe('The token ("pat_" + 64 hex). Shown only now: store it, it cannot be retrieved again.'),
});

/**
 * A token-authenticated caller (PAT or OAuth) may only hand out scopes it holds itself; otherwise a
 * narrow key could mint a broader one. Sessions are not scope-limited.
 */
function assertScopesHeld(auth: AuthContext, scopes: readonly string[]): void {
  if (auth.scopes === null) return;
  const held = auth.scopes;
  const missing = scopes.find((s) => !scopeCovered(held, s));
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

const keyId = objectId('API key');

/**
 * A scope the server knows: a misspelt one (`write:user`) would otherwise be stored and silently
 * grant nothing, which is how a caller ends up with a key that does less than they think.
 */
const scopeField = z
  .enum(KNOWN_SCOPES, {
    error: (issue) =>
      `unknown scope ${JSON.stringify(issue.input)}; known scopes: ${KNOWN_SCOPES.join(', ')}`,
  })
  .describe('A scope, e.g. read:leads, write:users or mcp:read');

const labelField = z.string().trim().min(1).max(100).describe('A name for the key, 1 to 100 characters');

const toolsetsField = z
  .array(z.enum(TOOLSET_NAMES).describe(`A toolset name: ${TOOLSET_NAMES.join(', ')}`))
  .max(20)
  .transform((names) => [...new Set(names)])
  .describe(
    "MCP toolsets this key lists by default (an X-MCP-Toolsets header overrides it per connection); empty means the default, core. Toolsets never grant a tool the key's scopes or the user's role do not allow.",
  );

function labelTaken(): AppError {
  return new AppError('conflict', {
    message: 'You already have an API key with this label (revoked keys keep their label)',
    details: [{ field: 'label', message: 'already used by one of your keys', code: 'duplicate' }],
  });
}

export const createApiKey = defineTool({
  name: 'create_api_key',
  title: 'Create API key',
  errors: [{ code: 'conflict', when: 'one of your keys (revoked ones too) already has this label' }],
  description:
    "Creates a personal access token (API key) for the caller. The response holds the key record and `plain_token`, which is shown only once: store it. Without `scopes` (or with an empty list) the key gets the defaults read/write on leads, contacts, opportunities, invoices, proposals and projects; the scopes for users, webhooks, settings (API keys included), custom objects and MCP (`mcp:read`, `mcp:write`) are never defaults and must be requested explicitly. An unknown scope is a 400 naming it. When called with a token, the new key may only hold scopes that token holds. `toolsets` chooses which MCP toolsets the key lists by default (core when empty). The label must be unique among the caller's keys, revoked ones included (409 otherwise).",
  input: z.strictObject({
    label: labelField,
    scopes: z
      .array(scopeField)
      .max(50)
      .optional()
      .describe('Scopes the key holds (at most 50); omitted or empty means the default scopes'),
    toolsets: toolsetsField.optional(),
  }),
  output: keyWithToken,
  access: { kind: 'write', resource: 'settings', permission: 'settings.api_keys.create' },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const scopes = scopesForNewKey(input.scopes);
    assertScopesHeld(ctx.auth, scopes);
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
      return { key: serializeApiKey(row, ctx.services), plain_token: token };
    } catch (err) {
      if (isUniqueViolation(err)) throw labelTaken();
      throw err;
    }
  },
});

export const listApiKeys = defineTool({
  name: 'list_api_keys',
  title: 'List API keys',
  description:
    "Lists the caller's own API keys, newest first, revoked ones included (`revoked_at` set). Token values are never returned; `token_prefix` tells keys apart. Not paged: a user has few keys.",
  input: z.strictObject({}),
  output: z.object({ keys: z.array(apiKeySchema).describe("The caller's keys, newest first") }),
  access: { kind: 'read', resource: 'settings', permission: 'settings.api_keys.view_own' },
  toolset: TOOLSET,
  async handler(_input, ctx) {
    const rows = await ctx.db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.orgId, ctx.auth.orgId), eq(apiKeys.userId, ctx.auth.userId)))
      .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
    return { keys: rows.map((row) => serializeApiKey(row, ctx.services)) };
  },
});

export const updateApiKey = defineTool({
  name: 'update_api_key',
  title: 'Update API key',
  errors: [
    { code: 'conflict', when: 'one of your keys (revoked ones too) already has this label' },
    { code: 'invalid_operation', when: 'the key is revoked' },
  ],
  description:
    'Changes the label and/or the MCP toolsets of one of the caller\'s active API keys; fields left out stay as they are, and the token does not change. Use it to make a key list more than the core tools over MCP (for example toolsets ["core", "admin"]); an empty list returns the key to the default. The new label must be unique among the caller\'s keys, revoked ones included (409 otherwise). A revoked key cannot be changed.',
  input: z.strictObject({
    id: keyId,
    label: labelField.optional(),
    toolsets: toolsetsField.optional(),
  }),
  output: z.object({ key: apiKeySchema }),
  access: { kind: 'write', resource: 'settings', permission: 'settings.api_keys.create' },
  annotations: { idempotentHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const row = await lockOwnKey(ctx.db, ctx.auth, input.id);
    if (row.revokedAt !== null) {
      // A revoked key keeps its label reserved, so it cannot be renamed either.
      throw new AppError('invalid_operation', { message: 'A revoked API key cannot be changed' });
    }
    const changes: Partial<Pick<ApiKeyRow, 'label' | 'toolsets' | 'updatedAt'>> = {};
    if (input.label !== undefined && input.label !== row.label) changes.label = input.label;
    if (input.toolsets !== undefined && input.toolsets.join(',') !== row.toolsets.join(',')) {
      changes.toolsets = input.toolsets;
    }
    if (Object.keys(changes).length === 0) return { key: serializeApiKey(row, ctx.services) };
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
      return { key: serializeApiKey(updated, ctx.services) };
    } catch (err) {
      if (isUniqueViolation(err)) throw labelTaken();
      throw err;
    }
  },
});

const REVOKED_MESSAGE = 'API key revoked';

export const revokeApiKey = defineTool({
  name: 'revoke_api_key',
  title: 'Revoke API key',
  description:
    "Revokes one of the caller's API keys: requests with its token fail with 401 from now on. The key stays in the list with `revoked_at` set and its label stays reserved. Revoking an already revoked key succeeds again with the same message.",
  input: z.strictObject({ id: keyId }),
  output: messageOutput,
  access: { kind: 'write', resource: 'settings', permission: 'settings.api_keys.delete' },
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const row = await lockOwnKey(ctx.db, ctx.auth, input.id);
    if (row.revokedAt === null) {
      await ctx.db
        .update(apiKeys)
        .set({ revokedAt: ctx.now, updatedAt: ctx.now })
        .where(and(eq(apiKeys.id, row.id), eq(apiKeys.orgId, ctx.auth.orgId)));
      ctx.afterCommit(() => ctx.services.authCache.invalidate({ credentialIds: [row.id] }));
    }
    return { message: REVOKED_MESSAGE };
  },
});

export const rotateApiKey = defineTool({
  name: 'rotate_api_key',
  title: 'Rotate API key',
  errors: [{ code: 'invalid_operation', when: 'the key is revoked' }],
  description:
    "Replaces the token of one of the caller's active API keys: same key id, label, scopes and toolsets, a new `plain_token` (shown only now). The old token stops working immediately. A revoked key cannot be rotated. When called with a token, that token must hold every scope of the key being rotated.",
  input: z.strictObject({ id: keyId }),
  output: keyWithToken,
  access: { kind: 'write', resource: 'settings', permission: 'settings.api_keys.create' },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const row = await lockOwnKey(ctx.db, ctx.auth, input.id);
    if (row.revokedAt !== null) {
      throw new AppError('invalid_operation', { message: 'A revoked API key cannot be rotated' });
    }
    // Rotating hands out a usable token, so it is held to the same rule as creating one.
    assertScopesHeld(ctx.auth, row.scopes);
    const token = generatePat();
    const [updated] = await ctx.db
      .update(apiKeys)
      .set({ tokenHash: hashToken(token), tokenPrefix: tokenPrefix(token), updatedAt: ctx.now })
      .where(and(eq(apiKeys.id, row.id), eq(apiKeys.orgId, ctx.auth.orgId)))
      .returning();
    if (!updated) throw new AppError('not_found', { message: 'API key not found' });
    ctx.afterCommit(() => ctx.services.authCache.invalidate({ credentialIds: [row.id] }));
    return { key: serializeApiKey(updated, ctx.services), plain_token: token };
  },
});

export const apiKeyTools = [createApiKey, listApiKeys, updateApiKey, revokeApiKey, rotateApiKey];
