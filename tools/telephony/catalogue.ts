// What the telephony area brings to the kernel's catalogues: its role permissions with the tier of
// role that holds each (core/access.ts). Its tools use the `settings` scope family and toolset the
// API keys area declares (tools/api-keys/catalogue.ts). tools/index.ts collects every area's
// declaration; the declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const telephonyCatalogue = {
  // The provider account pays for every message and call: admins (and owners) see and change it.
  permissions: {
    'settings.telephony.view': 'admin',
    'settings.telephony.manage': 'admin',
  },
} as const satisfies AreaCatalogue;

type TelephonyPermissions = (typeof telephonyCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends TelephonyPermissions {}
}
