// What the custom-objects area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each, and its token scope family (core/access.ts), and the MCP toolset it introduces (core/toolsets.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const customObjectsCatalogue = {
  permissions: {
    'custom_objects.view': 'read',
    'custom_objects.create': 'write',
    'custom_objects.edit': 'write',
    'custom_objects.delete': 'manage',
    // Definitions (the fields of custom objects) are workspace settings, for admins.
    'settings.custom_objects.manage': 'admin',
  },
  scopes: { custom_objects: 'custom objects and their records' },
  toolsets: {
    customization:
      'Custom objects (definitions and their records) and custom activity types (definitions). Needs a plan with custom objects or custom activity types.',
  },
  // The plan feature its tools need, with the lowest plan that has it (core/access.ts PLANS).
  features: { custom_objects: 'pro' },
} as const satisfies AreaCatalogue;

type CustomObjectsPermissions = (typeof customObjectsCatalogue)['permissions'];

type CustomObjectsScopes = (typeof customObjectsCatalogue)['scopes'];

type CustomObjectsToolsets = (typeof customObjectsCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends CustomObjectsToolsets {}
}

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends CustomObjectsScopes {}
  interface PermissionCatalog extends CustomObjectsPermissions {}
}

type CustomObjectsFeatures = (typeof customObjectsCatalogue)['features'];

declare module '../../core/access.ts' {
  interface FeatureCatalog extends CustomObjectsFeatures {}
}
