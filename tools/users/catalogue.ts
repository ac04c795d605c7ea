// What the users area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const usersCatalogue = {
  permissions: {
    'users.view': 'read',
    'users.create': 'admin',
    'users.edit': 'admin',
    'users.deactivate': 'admin',
    // Only owners delete users (the specification's state table).
    'users.delete': 'owner',
  },
} as const satisfies AreaCatalogue;

type UsersPermissions = (typeof usersCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends UsersPermissions {}
}
