// What the smart-views area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
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
} as const satisfies AreaCatalogue;

type SmartViewsPermissions = (typeof smartViewsCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends SmartViewsPermissions {}
}
