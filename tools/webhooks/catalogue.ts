// What the webhooks area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
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
} as const satisfies AreaCatalogue;

type WebhooksPermissions = (typeof webhooksCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends WebhooksPermissions {}
}
