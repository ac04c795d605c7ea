// What the webhooks area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each, and its token scope family (core/access.ts), and the MCP toolset it introduces (core/toolsets.ts). It also brings the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { webhooksEvents } from './events.ts';

export const webhooksCatalogue = {
  permissions: {
    'settings.webhooks.view_global': 'admin',
    // The one webhook permission below admin: managers see their own subscriptions.
    'settings.webhooks.view_own': 'manage',
    'settings.webhooks.create': 'admin',
    'settings.webhooks.edit': 'admin',
    'settings.webhooks.delete': 'admin',
  },
  scopes: { webhooks: 'webhook subscriptions and deliveries' },
  toolsets: {
    webhooks:
      'Webhook subscriptions of the organization (create, list, read, update, delete, send a test) and their delivery log (read, replay). Needs a plan with webhooks.',
  },
  events: webhooksEvents,
  // The plan feature its tools need, with the lowest plan that has it (core/access.ts PLANS).
  features: { webhooks: 'starter' },
} as const satisfies AreaCatalogue;

type WebhooksPermissions = (typeof webhooksCatalogue)['permissions'];

type WebhooksScopes = (typeof webhooksCatalogue)['scopes'];

type WebhooksToolsets = (typeof webhooksCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends WebhooksToolsets {}
}

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends WebhooksScopes {}
  interface PermissionCatalog extends WebhooksPermissions {}
}

type WebhooksFeatures = (typeof webhooksCatalogue)['features'];

declare module '../../core/access.ts' {
  interface FeatureCatalog extends WebhooksFeatures {}
}
