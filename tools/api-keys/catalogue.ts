// What the api-keys area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each, and its token scope family (core/access.ts), and the MCP toolset it introduces (core/toolsets.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const apiKeysCatalogue = {
  // Every role manages its own API keys: a key never exceeds its user's role anyway.
  permissions: {
    'settings.api_keys.create': 'read',
    'settings.api_keys.view_own': 'read',
    'settings.api_keys.delete': 'read',
  },
  scopes: { settings: 'your API keys and the organization’s settings (such as its telephony account)' },
  toolsets: {
    settings:
      "The caller's own API keys: create, list, update (label, toolsets), revoke and rotate; the OAuth apps the caller allowed (installations): list and revoke; and the organization's telephony account (admins).",
  },
} as const satisfies AreaCatalogue;

type ApiKeysPermissions = (typeof apiKeysCatalogue)['permissions'];

type ApiKeysScopes = (typeof apiKeysCatalogue)['scopes'];

type ApiKeysToolsets = (typeof apiKeysCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends ApiKeysToolsets {}
}

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends ApiKeysScopes {}
  interface PermissionCatalog extends ApiKeysPermissions {}
}
