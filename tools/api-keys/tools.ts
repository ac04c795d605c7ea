// Personal access tokens (API keys) of the caller: create, list, revoke, rotate. Only a SHA-256 hash
// of a token is stored, so the plain token is shown once, in the create or rotate response. This
// file declares the tools; the data functions are store.ts.
import { z } from 'zod';
import { messageOutput, objectId } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import type { ToolsetName } from '../../core/toolsets.ts';
import { apiKeySchema, insertApiKey, listOwnKeys, revokeKey, rotateKey, writeApiKey } from './store.ts';

const TOOLSET = 'settings';

const keyWithToken = z.object({
  key: apiKeySchema,
  plain_token: z
    .string()
    .describe('The token ("pat_" + 64 hex). Shown only now: store it, it cannot be retrieved again.'),
});

const keyId = objectId('API key');

/**
 * A scope string. The specification does not validate scopes against a list: a misspelt one
 * (`write:user`) is stored and grants nothing, and the create response names it in `warnings`.
 * Only the shape is checked, so a scope is a readable token and never whitespace or control bytes.
 */
const scopeField = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[\x21-\x7e]+$/, 'a scope is printable ASCII without spaces, e.g. read:leads')
  .describe('A scope, e.g. read:leads, write:users or mcp:read (1 to 100 printable characters)');

const labelField = z.string().trim().min(1).max(100).describe('A name for the key, 1 to 100 characters');

/**
 * What the key tools need from the catalogue (core/catalogue.ts): tools/index.ts builds it before
 * this area, which joins it by its declaration.
 */
export interface KeyCatalogue {
  knownScopes: readonly string[];
  toolsetNames: readonly [ToolsetName, ...ToolsetName[]];
}

const toolsetsFieldOf = (names: KeyCatalogue['toolsetNames']) =>
  z
    .array(z.enum(names).describe(`A toolset name: ${names.join(', ')}`))
    .max(20)
    .transform((names) => [...new Set(names)])
    .describe(
      "MCP toolsets this key lists by default (an X-MCP-Toolsets header overrides it per connection); empty means the default, core. Toolsets never grant a tool the key's scopes or the user's role do not allow.",
    );

const createdKey = keyWithToken.extend({
  warnings: z
    .array(z.string().describe('One warning, naming the scope'))
    .optional()
    .describe('Present when some requested scopes are unknown: they are stored as given and grant nothing'),
});

export function createApiKeyTool(catalogue: KeyCatalogue) {
  return defineTool({
    name: 'create_api_key',
    title: 'Create API key',
    errors: [{ code: 'conflict', when: 'one of your keys (revoked ones too) already has this label' }],
    description:
      'Creates a personal access token (API key) for the caller, e.g. for an integration; `plain_token` is shown only once: store it. Without `scopes` the key gets read/write on leads, contacts, opportunities, invoices, proposals and projects; scopes for users, webhooks, settings, custom objects and MCP (`mcp:read`, `mcp:write`) must be requested explicitly. An unknown scope grants nothing and is listed in `warnings`. Called with a token, the key may only hold scopes that token holds. Labels are unique per caller (409).',
    input: z.strictObject({
      label: labelField,
      scopes: z
        .array(scopeField)
        .max(50)
        .optional()
        .describe('Scopes the key holds (at most 50); omitted or empty means the default scopes'),
      toolsets: toolsetsFieldOf(catalogue.toolsetNames).optional(),
    }),
    output: createdKey,
    access: { kind: 'write', resource: 'settings', permission: 'settings.api_keys.create' },
    toolset: TOOLSET,
    async handler(input, ctx) {
      return insertApiKey(ctx, input, catalogue.knownScopes);
    },
  });
}

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
    return { keys: await listOwnKeys(ctx) };
  },
});

export function updateApiKeyTool(catalogue: KeyCatalogue) {
  return defineTool({
    name: 'update_api_key',
    title: 'Update API key',
    errors: [
      { code: 'conflict', when: 'one of your keys (revoked ones too) already has this label' },
      { code: 'invalid_operation', when: 'the key is revoked' },
    ],
    description:
      'Changes the label and/or MCP toolsets of one of the caller\'s active API keys; the token stays the same. Use it to list more than the core tools over MCP (e.g. toolsets ["core", "admin"]); an empty list restores the default. Labels are unique per caller (409). Revoked keys cannot change.',
    input: z.strictObject({
      id: keyId,
      label: labelField.optional(),
      toolsets: toolsetsFieldOf(catalogue.toolsetNames).optional(),
    }),
    output: z.object({ key: apiKeySchema }),
    access: { kind: 'write', resource: 'settings', permission: 'settings.api_keys.create' },
    annotations: { idempotentHint: true },
    toolset: TOOLSET,
    async handler(input, ctx) {
      return { key: await writeApiKey(ctx, input.id, input) };
    },
  });
}

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
    await revokeKey(ctx, input.id);
    return { message: REVOKED_MESSAGE };
  },
});

export function rotateApiKeyTool(catalogue: KeyCatalogue) {
  return defineTool({
    name: 'rotate_api_key',
    title: 'Rotate API key',
    errors: [{ code: 'invalid_operation', when: 'the key is revoked' }],
    description:
      "Replaces the token of one of the caller's active API keys: same key id, label, scopes and toolsets, a new `plain_token` (shown only now). The old token stops working immediately. A revoked key cannot be rotated. When called with a token, that token must hold every known scope of the key being rotated.",
    input: z.strictObject({ id: keyId }),
    output: keyWithToken,
    access: { kind: 'write', resource: 'settings', permission: 'settings.api_keys.create' },
    toolset: TOOLSET,
    async handler(input, ctx) {
      return rotateKey(ctx, input.id, catalogue.knownScopes);
    },
  });
}
