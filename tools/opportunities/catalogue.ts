// What the opportunities area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const opportunitiesCatalogue = {
  permissions: {
    'opportunities.view': 'read',
    'opportunities.create': 'write',
    'opportunities.edit': 'write',
    'opportunities.delete': 'manage',
  },
} as const satisfies AreaCatalogue;

type OpportunitiesPermissions = (typeof opportunitiesCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends OpportunitiesPermissions {}
}
