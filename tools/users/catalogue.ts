// What the users area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each, and its token scope family (core/access.ts). tools/index.ts collects every area's declaration; the
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
  scopes: ['users'],
} as const satisfies AreaCatalogue;

type UsersPermissions = (typeof usersCatalogue)['permissions'];

type UsersScopes = Record<(typeof usersCatalogue)['scopes'][number], true>;

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends UsersScopes {}
  interface PermissionCatalog extends UsersPermissions {}
}
