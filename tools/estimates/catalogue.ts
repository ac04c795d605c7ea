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
} as const satisfies AreaCatalogue;

type EstimatesPermissions = (typeof estimatesCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends EstimatesPermissions {}
}
