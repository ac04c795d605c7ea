// The oauth area's tools: the organization's OAuth apps (owners and admins register, read, change
// and delete them; the secret is shown once, at creation) and the installations (grants) of its
// people (everyone sees and revokes their own; owners and admins every one of the organization).
// The authorization server itself (authorize, token, revoke, registration, discovery) is public
// routes, not tools (authorize.ts, token.ts, register.ts, discovery.ts).
import { z } from 'zod';
import { messageOutput, objectId } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import { redirectUrisField } from './clients.ts';
import {
  deleteApp,
  deleteInstallation,
  getApp,
  insertApp,
  installationSchema,
  listApps,
  listInstallations,
  oauthAppSchema,
  updateApp,
} from './store.ts';

const TOOLSET = 'admin';
/** Everyone's own grants sit with their own API keys: the admin toolset is for owners and admins. */
const OWN_TOOLSET = 'settings';
const appId = objectId('OAuth app');

const nameField = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe('App name shown on the consent page, 1 to 200 characters');
const redirectUris = redirectUrisField.describe(
  'Redirect URIs (1 to 10): https URLs, or http on localhost/127.0.0.1/[::1]; the authorization request must name one exactly',
);

function scopesFieldOf(known: readonly string[]) {
  return z
    .array(
      z
        .string()
        .refine((s) => known.includes(s), 'not a scope this server knows')
        .describe('A scope, e.g. mcp:read or read:leads'),
    )
    .min(1)
    .max(50)
    .describe(`Scopes the app may ask for (a subset of: ${known.join(', ')})`);
}

export function createOauthAppTool(knownScopes: readonly string[]) {
  return defineTool({
    name: 'create_oauth_app',
    title: 'Register OAuth app',
    description:
      'Registers an OAuth app of the organization (a confidential client of the code flow with PKCE). Answers the app, its `client_id` and its `client_secret`, shown only now: store it. Only members of this organization can authorize the app. Owners and admins only.',
    input: z.strictObject({
      name: nameField,
      redirect_uris: redirectUris,
      scopes: scopesFieldOf(knownScopes),
    }),
    output: z.object({
      app: oauthAppSchema,
      client_id: z.string().describe('The client_id'),
      client_secret: z.string().describe('The client secret; shown only now, stored hashed'),
    }),
    access: { kind: 'write', resource: 'oauth', permission: 'oauth.apps.manage' },
    toolset: TOOLSET,
    async handler(input, ctx) {
      return insertApp(ctx, input);
    },
  });
}

export const listOauthApps = defineTool({
  name: 'list_oauth_apps',
  title: 'List OAuth apps',
  description:
    "Lists the organization's registered OAuth apps, newest first (self-registered clients and metadata-document clients are not listed; their grants are in list_oauth_installations). Secrets are never returned. Owners and admins only.",
  input: z.strictObject({}),
  output: z.object({ apps: z.array(oauthAppSchema).describe('The apps, newest first') }),
  access: { kind: 'read', resource: 'oauth', permission: 'oauth.apps.manage' },
  toolset: TOOLSET,
  async handler(_input, ctx) {
    return { apps: await listApps(ctx) };
  },
});

export const getOauthApp = defineTool({
  name: 'get_oauth_app',
  title: 'Get OAuth app',
  description: 'Reads one registered OAuth app of the organization by id. Owners and admins only.',
  input: z.strictObject({ id: appId }),
  output: z.object({ app: oauthAppSchema }),
  access: { kind: 'read', resource: 'oauth', permission: 'oauth.apps.manage' },
  toolset: TOOLSET,
  async handler(input, ctx) {
    return { app: await getApp(ctx, input.id) };
  },
});

export function updateOauthAppTool(knownScopes: readonly string[]) {
  return defineTool({
    name: 'update_oauth_app',
    title: 'Update OAuth app',
    description:
      "Changes an OAuth app's name, redirect URIs or allowed scopes; fields left out stay. The client_id and secret do not change. Grants already given keep their scopes until they are given again. Owners and admins only.",
    input: z.strictObject({
      id: appId,
      name: nameField.optional(),
      redirect_uris: redirectUris.optional(),
      scopes: scopesFieldOf(knownScopes).optional(),
    }),
    output: z.object({ app: oauthAppSchema }),
    access: { kind: 'write', resource: 'oauth', permission: 'oauth.apps.manage' },
    annotations: { idempotentHint: true },
    toolset: TOOLSET,
    async handler(input, ctx) {
      return { app: await updateApp(ctx, input.id, input) };
    },
  });
}

export const deleteOauthApp = defineTool({
  name: 'delete_oauth_app',
  title: 'Delete OAuth app',
  description:
    'Deletes an OAuth app with every grant of it: all its access and refresh tokens stop working at once. Owners and admins only.',
  input: z.strictObject({ id: appId }),
  output: messageOutput,
  access: { kind: 'write', resource: 'oauth', permission: 'oauth.apps.manage' },
  annotations: { destructiveHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    await deleteApp(ctx, input.id);
    return { message: 'OAuth app deleted' };
  },
});

export const listOauthInstallations = defineTool({
  name: 'list_oauth_installations',
  title: 'List OAuth installations',
  description:
    "Lists the apps people of the organization allowed to act for them (one installation per app and person), newest first: owners and admins see every one, others their own. Shows each app's name and where its details came from, the scopes and the MCP toolsets granted.",
  input: z.strictObject({}),
  output: z.object({
    installations: z.array(installationSchema).describe('The installations, newest first'),
  }),
  access: { kind: 'read', resource: 'oauth', permission: 'oauth.installations.view_own' },
  toolset: OWN_TOOLSET,
  async handler(_input, ctx) {
    return { installations: await listInstallations(ctx) };
  },
});

export const deleteOauthInstallation = defineTool({
  name: 'delete_oauth_installation',
  title: 'Revoke OAuth installation',
  description:
    "Revokes an app's grant: every access and refresh token it holds for that person stops working at once; the app must ask again. Your own installations, or (owners and admins) any of the organization.",
  input: z.strictObject({ id: objectId('OAuth installation') }),
  output: messageOutput,
  access: { kind: 'write', resource: 'oauth', permission: 'oauth.installations.view_own' },
  annotations: { destructiveHint: true },
  toolset: OWN_TOOLSET,
  async handler(input, ctx) {
    await deleteInstallation(ctx, input.id);
    return { message: 'OAuth installation revoked' };
  },
});
