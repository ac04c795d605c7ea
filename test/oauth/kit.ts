// The test kit of tools/oauth (test/README.md "Test kits"): a victim app and a victim installation
// with a live token, which another organization must neither read, change nor revoke.
import { eq } from 'drizzle-orm';
import { hashToken } from '../../core/auth/tokens.ts';
import { oauthTokens } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import { oauthClients, oauthInstallations } from '../../tools/oauth/tables.ts';
import { defineKit, type KitScope, NO_BODY } from '../fixtures/kit.ts';

async function insertApp({ t, org }: KitScope): Promise<string> {
  const id = newId();
  await t.services.db.system.insert(oauthClients).values({
    id,
    orgId: org.orgId,
    clientId: `oc_${id}victim`,
    source: 'app',
    name: 'Victim app',
    redirectUris: ['https://victim.example.test/cb'],
    scopes: ['mcp:read'],
    secretHash: hashToken('victim-secret'),
    createdBy: org.ownerId,
  });
  return id;
}

export const kit = defineKit({
  area: 'oauth',
  bodies: {
    create_oauth_app: {
      body: { name: 'App', redirect_uris: ['https://example.com/cb'], scopes: ['mcp:read'] },
      text: 'name',
      free: 'redirect_uris',
    },
    update_oauth_app: { body: { name: 'App' }, text: 'name', free: 'scopes' },
    delete_oauth_app: NO_BODY,
    delete_oauth_installation: NO_BODY,
  },
  victims: {
    '/oauth/apps': async (scope) => {
      const id = await insertApp(scope);
      const db = scope.t.services.db.system;
      return { id, read: () => db.select().from(oauthClients).where(eq(oauthClients.id, id)) };
    },
    '/oauth/installations': async (scope) => {
      const { t, org } = scope;
      const clientRef = await insertApp(scope);
      const id = newId();
      const db = t.services.db.system;
      await db.insert(oauthInstallations).values({
        id,
        orgId: org.orgId,
        userId: org.ownerId,
        clientRef,
        scopes: ['mcp:read'],
        toolsets: [],
      });
      const tokenId = newId();
      await db.insert(oauthTokens).values({
        id: tokenId,
        orgId: org.orgId,
        userId: org.ownerId,
        appName: 'Victim app',
        tokenHash: hashToken(`victim-token-${tokenId}`),
        scopes: ['mcp:read'],
        resource: 'mcp',
        installationId: id,
      });
      return {
        id,
        read: async () => ({
          installation: await db.select().from(oauthInstallations).where(eq(oauthInstallations.id, id)),
          token: await db.select().from(oauthTokens).where(eq(oauthTokens.id, tokenId)),
        }),
      };
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      await seed('/api/v1/oauth/apps', {
        name: 'Fuzz app',
        redirect_uris: ['https://example.com/cb'],
        scopes: ['mcp:read'],
      });
    },
  },
});
