// What the email area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each, and its token scope family (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const emailCatalogue = {
  permissions: {
    'email.view': 'read',
    'email.send': 'write',
  },
  scopes: ['email'],
} as const satisfies AreaCatalogue;

type EmailPermissions = (typeof emailCatalogue)['permissions'];

type EmailScopes = Record<(typeof emailCatalogue)['scopes'][number], true>;

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends EmailScopes {}
  interface PermissionCatalog extends EmailPermissions {}
}
