// What the leads area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts), and the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { leadsEvents } from './events.ts';

export const leadsCatalogue = {
  permissions: {
    'leads.view': 'read',
    'leads.create': 'write',
    'leads.edit': 'write',
    'leads.delete': 'manage',
  },
  events: leadsEvents,
} as const satisfies AreaCatalogue;

type LeadsPermissions = (typeof leadsCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends LeadsPermissions {}
}
