// What the connected-accounts area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). It also brings the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { connectedAccountsEvents } from './events.ts';

export const connectedAccountsCatalogue = {
  // A user's own connected mail accounts: no one sees or sends through another's.
  permissions: {
    'connected_accounts.view': 'read',
    'connected_accounts.manage': 'write',
  },
  events: connectedAccountsEvents,
} as const satisfies AreaCatalogue;

type ConnectedAccountsPermissions = (typeof connectedAccountsCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends ConnectedAccountsPermissions {}
}
