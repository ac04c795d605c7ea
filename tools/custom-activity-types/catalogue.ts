// What the custom-activity-types area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const customActivityTypesCatalogue = {
  permissions: {
    'settings.custom_activity_types.manage': 'admin',
  },
  // The plan feature its tools need, with the lowest plan that has it (core/access.ts PLANS).
  features: { custom_activity_types: 'pro' },
} as const satisfies AreaCatalogue;

type CustomActivityTypesPermissions = (typeof customActivityTypesCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends CustomActivityTypesPermissions {}
}

type CustomActivityTypesFeatures = (typeof customActivityTypesCatalogue)['features'];

declare module '../../core/access.ts' {
  interface FeatureCatalog extends CustomActivityTypesFeatures {}
}
