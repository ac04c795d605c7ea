// What the invoices area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const invoicesCatalogue = {
  permissions: {
    'invoices.view': 'read',
    'invoices.create': 'write',
    'invoices.edit': 'write',
    'invoices.delete': 'manage',
  },
} as const satisfies AreaCatalogue;

type InvoicesPermissions = (typeof invoicesCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends InvoicesPermissions {}
}
