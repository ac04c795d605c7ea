// The oauth area's data functions over the tenant transaction: the organization's registered apps
// (secret kept hashed, shown once) and the installations (grants) of its people. Deleting an app
// or an installation revokes every access token it issued and drops them from the credential
// cache once the transaction commits.
import { and, desc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { roleHolds } from '../../core/access.ts';
import { hashToken } from '../../core/auth/tokens.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { ToolContext } from '../../core/tool.ts';
import { type ClientRow, newClientCredentials } from './clients.ts';
import { forgetTokens, revokeInstallationTokens } from './grants.ts';
import { oauthClients, oauthInstallations } from './tables.ts';

type Ctx = Pick<ToolContext, 'db' | 'auth' | 'now' | 'afterCommit' | 'services'>;

export const oauthAppSchema = z
  .object({
    _id: z.string().describe('App id (24 hex characters)'),
    client_id: z.string().describe('The OAuth client_id the app sends to /oauth/authorize and /oauth/token'),
    name: z.string().describe('Name shown on the consent page'),
    redirect_uris: z.array(z.string().describe('A redirect URI')).describe('Redirect URIs, matched exactly'),
    scopes: z.array(z.string().describe('A scope')).describe('Scopes the app may ask for'),
    created_by: z.string().nullable().describe('User who registered it'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('An OAuth app registered by the organization; its secret is never shown again');
type OauthApp = z.infer<typeof oauthAppSchema>;

export const installationSchema = z
  .object({
    _id: z.string().describe('Installation id (24 hex characters)'),
    user_id: z.string().describe('The person who gave the grant; its tokens act as them'),
    app: z
      .object({
        client_id: z.string().describe('The client_id (a metadata document URL for such clients)'),
        name: z.string().describe('The app name'),
        source: z
          .enum(['app', 'dcr', 'cimd'])
          .describe('app: registered by the organization; dcr: self-registered; cimd: metadata document'),
      })
      .describe('The app the grant is for'),
    scopes: z.array(z.string().describe('A scope')).describe('Scopes granted'),
    toolsets: z
      .array(z.string().describe('A toolset name'))
      .describe('MCP toolsets chosen at consent; empty means the default'),
    created_at: z.string().describe('When first granted (ISO 8601)'),
    updated_at: z.string().describe('When last granted again (ISO 8601)'),
  })
  .describe('A grant of one app by one person');
type Installation = z.infer<typeof installationSchema>;

function serializeApp(row: ClientRow): OauthApp {
  return {
    _id: row.id,
    client_id: row.clientId,
    name: row.name,
    redirect_uris: [...row.redirectUris],
    scopes: [...(row.scopes ?? [])],
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function notFound(): AppError {
  return new AppError('not_found', { message: 'OAuth app not found' });
}

async function appRow(ctx: Ctx, id: string): Promise<ClientRow> {
  const [row] = await ctx.db
    .select()
    .from(oauthClients)
    .where(
      and(eq(oauthClients.id, id), eq(oauthClients.orgId, ctx.auth.orgId), eq(oauthClients.source, 'app')),
    )
    .limit(1);
  if (!row) throw notFound();
  return row;
}

export async function insertApp(
  ctx: Ctx,
  input: { name: string; redirect_uris: string[]; scopes: string[] },
): Promise<{ app: OauthApp; client_id: string; client_secret: string }> {
  const { clientId, secret } = newClientCredentials();
  const [row] = await ctx.db
    .insert(oauthClients)
    .values({
      id: newId(ctx.now),
      orgId: ctx.auth.orgId,
      clientId,
      source: 'app',
      name: input.name,
      redirectUris: [...new Set(input.redirect_uris)],
      scopes: [...new Set(input.scopes)],
      secretHash: hashToken(secret),
      createdBy: ctx.auth.userId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  if (!row) throw new Error('insert returned no app');
  return { app: serializeApp(row), client_id: clientId, client_secret: secret };
}

export async function listApps(ctx: Ctx): Promise<OauthApp[]> {
  const rows = await ctx.db
    .select()
    .from(oauthClients)
    .where(and(eq(oauthClients.orgId, ctx.auth.orgId), eq(oauthClients.source, 'app')))
    .orderBy(desc(oauthClients.createdAt), desc(oauthClients.id));
  return rows.map(serializeApp);
}

export async function getApp(ctx: Ctx, id: string): Promise<OauthApp> {
  return serializeApp(await appRow(ctx, id));
}

export async function updateApp(
  ctx: Ctx,
  id: string,
  input: { name?: string | undefined; redirect_uris?: string[] | undefined; scopes?: string[] | undefined },
): Promise<OauthApp> {
  await appRow(ctx, id);
  const [row] = await ctx.db
    .update(oauthClients)
    .set({
      ...(input.name !== undefined && { name: input.name }),
      ...(input.redirect_uris !== undefined && { redirectUris: [...new Set(input.redirect_uris)] }),
      ...(input.scopes !== undefined && { scopes: [...new Set(input.scopes)] }),
      updatedAt: ctx.now,
    })
    .where(and(eq(oauthClients.id, id), eq(oauthClients.orgId, ctx.auth.orgId)))
    .returning();
  if (!row) throw notFound();
  return serializeApp(row);
}

/** Deletes an app, its installations and codes; every token it issued stops working at once. */
export async function deleteApp(ctx: Ctx, id: string): Promise<void> {
  const row = await appRow(ctx, id);
  const installs = await ctx.db
    .select({ id: oauthInstallations.id })
    .from(oauthInstallations)
    .where(eq(oauthInstallations.clientRef, row.id));
  const revoked = await revokeInstallationTokens(
    ctx.db,
    installs.map((i) => i.id),
    ctx.now,
  );
  await ctx.db
    .delete(oauthClients)
    .where(and(eq(oauthClients.id, row.id), eq(oauthClients.orgId, ctx.auth.orgId)));
  ctx.afterCommit(() => forgetTokens(ctx.services, revoked));
}

/** Owners and admins see and revoke every installation of the organization; others their own. */
function seesAll(ctx: Ctx): boolean {
  return roleHolds(ctx.auth.role, 'admin');
}

export async function listInstallations(ctx: Ctx): Promise<Installation[]> {
  const own = seesAll(ctx) ? undefined : eq(oauthInstallations.userId, ctx.auth.userId);
  const rows = await ctx.db
    .select({ installation: oauthInstallations, client: oauthClients })
    .from(oauthInstallations)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthInstallations.clientRef))
    .where(and(eq(oauthInstallations.orgId, ctx.auth.orgId), own))
    .orderBy(desc(oauthInstallations.createdAt), desc(oauthInstallations.id));
  return rows.map(({ installation, client }) => ({
    _id: installation.id,
    user_id: installation.userId,
    app: { client_id: client.clientId, name: client.name, source: client.source },
    scopes: [...installation.scopes],
    toolsets: [...installation.toolsets],
    created_at: installation.createdAt.toISOString(),
    updated_at: installation.updatedAt.toISOString(),
  }));
}

/** Revokes a grant: its tokens stop working at once, its refresh tokens and codes are deleted. */
export async function deleteInstallation(ctx: Ctx, id: string): Promise<void> {
  const own = seesAll(ctx) ? undefined : eq(oauthInstallations.userId, ctx.auth.userId);
  const [row] = await ctx.db
    .select({ id: oauthInstallations.id })
    .from(oauthInstallations)
    .where(and(eq(oauthInstallations.id, id), eq(oauthInstallations.orgId, ctx.auth.orgId), own))
    .limit(1);
  if (!row) throw new AppError('not_found', { message: 'OAuth installation not found' });
  const revoked = await revokeInstallationTokens(ctx.db, [row.id], ctx.now);
  await ctx.db.delete(oauthInstallations).where(inArray(oauthInstallations.id, [row.id]));
  ctx.afterCommit(() => forgetTokens(ctx.services, revoked));
}
