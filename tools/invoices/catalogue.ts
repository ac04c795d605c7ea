// What the invoices area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts), and the MCP toolset it introduces (core/toolsets.ts). It also brings the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { invoicesEvents } from './events.ts';

export const invoicesCatalogue = {
  permissions: {
    'invoices.view': 'read',
    'invoices.create': 'write',
    'invoices.edit': 'write',
    'invoices.delete': 'manage',
  },
  toolsets: {
    billing:
      'Money and documents sent to customers. Invoices: list, read, create, update and delete drafts, finalize (gap-free numbers), send (mails the PDF), the PDF, record payments, void and mark uncollectible. Estimates (needs a plan with estimates): the same plus accept, decline and convert to an invoice. Proposals: draft, send (a public link to accept or decline), expire, and suggested discovery questions. Tools that send to a customer preview unless given confirm: true.',
  },
  events: invoicesEvents,
} as const satisfies AreaCatalogue;

type InvoicesPermissions = (typeof invoicesCatalogue)['permissions'];

type InvoicesToolsets = (typeof invoicesCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends InvoicesToolsets {}
}

declare module '../../core/access.ts' {
  interface PermissionCatalog extends InvoicesPermissions {}
}
