// What the estimates area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const estimatesCatalogue = {
  permissions: {
    'estimates.view': 'read',
    'estimates.create': 'write',
    'estimates.edit': 'write',
    'estimates.delete': 'manage',
  },
  // The plan feature its tools need, with the lowest plan that has it (core/access.ts PLANS).
  features: { estimates: 'pro' },
} as const satisfies AreaCatalogue;

type EstimatesPermissions = (typeof estimatesCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends EstimatesPermissions {}
}

type EstimatesFeatures = (typeof estimatesCatalogue)['features'];

declare module '../../core/access.ts' {
  interface FeatureCatalog extends EstimatesFeatures {}
}
