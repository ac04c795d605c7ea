// What the users area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each, and its token scope family (core/access.ts), and the MCP toolset it introduces (core/toolsets.ts). tools/index.ts collects every area's declaration; the
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
  scopes: { users: "your organization's users" },
  toolsets: {
    admin: 'User management for owners and admins: create, update, deactivate, reactivate and delete users.',
  },
} as const satisfies AreaCatalogue;

type UsersPermissions = (typeof usersCatalogue)['permissions'];

type UsersScopes = (typeof usersCatalogue)['scopes'];

type UsersToolsets = (typeof usersCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends UsersToolsets {}
}

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends UsersScopes {}
  interface PermissionCatalog extends UsersPermissions {}
}
