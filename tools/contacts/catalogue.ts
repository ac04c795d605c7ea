// What the contacts area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts), and the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { contactsEvents } from './events.ts';

export const contactsCatalogue = {
  permissions: {
    'contacts.view': 'read',
    'contacts.create': 'write',
    'contacts.edit': 'write',
    'contacts.delete': 'manage',
  },
  events: contactsEvents,
} as const satisfies AreaCatalogue;

type ContactsPermissions = (typeof contactsCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends ContactsPermissions {}
}
