// What the trash area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const trashCatalogue = {
  permissions: {
    'trash.view': 'read',
    'trash.restore': 'write',
  },
} as const satisfies AreaCatalogue;

type TrashPermissions = (typeof trashCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends TrashPermissions {}
}
