// What the smart-views area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts), and the MCP toolset it introduces (core/toolsets.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const smartViewsCatalogue = {
  permissions: {
    'smart_views.view': 'read',
    'smart_views.create': 'write',
    'smart_views.edit': 'write',
    // Edit or delete shared views someone else created (everyone may edit and delete their own).
    'smart_views.manage_shared': 'manage',
  },
  toolsets: {
    views:
      'Smart views (saved lead filters): create, list, read, update and delete them. Running one is in core.',
  },
  // The plan feature its tools need, with the lowest plan that has it (core/access.ts PLANS).
  features: { smart_views: 'starter' },
} as const satisfies AreaCatalogue;

type SmartViewsPermissions = (typeof smartViewsCatalogue)['permissions'];

type SmartViewsToolsets = (typeof smartViewsCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends SmartViewsToolsets {}
}

declare module '../../core/access.ts' {
  interface PermissionCatalog extends SmartViewsPermissions {}
}

type SmartViewsFeatures = (typeof smartViewsCatalogue)['features'];

declare module '../../core/access.ts' {
  interface FeatureCatalog extends SmartViewsFeatures {}
}
