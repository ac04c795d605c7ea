// What the webhooks area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each, and its token scope family (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const webhooksCatalogue = {
  permissions: {
    'settings.webhooks.view_global': 'admin',
    // The one webhook permission below admin: managers see their own subscriptions.
    'settings.webhooks.view_own': 'manage',
    'settings.webhooks.create': 'admin',
    'settings.webhooks.edit': 'admin',
    'settings.webhooks.delete': 'admin',
  },
  scopes: ['webhooks'],
} as const satisfies AreaCatalogue;

type WebhooksPermissions = (typeof webhooksCatalogue)['permissions'];

type WebhooksScopes = Record<(typeof webhooksCatalogue)['scopes'][number], true>;

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends WebhooksScopes {}
  interface PermissionCatalog extends WebhooksPermissions {}
}
