import { defineArea, type InvoiceProjectsHook } from '../../core/area.ts';
import { documentAreaParts } from '../documents/area.ts';
import { invoicesCatalogue } from './catalogue.ts';
import { invoicesOverdue } from './jobs.ts';
import { invoiceResource } from './resources.ts';
import { invoiceRoutes } from './routes.ts';
import { invoiceStatusMachine } from './store.ts';
import { createInvoiceTool, invoiceTools, updateInvoiceTool } from './tools.ts';

/**
 * Invoices: drafts with priced lines, finalizing (gap-free numbers), payments, void, uncollectible,
 * sending by mail with the PDF, the PDF itself, and the daily overdue flag (jobs.ts). Built with the
 * invoice-project hooks of the areas whose records an invoice bills (tools/projects; tools/index.ts
 * collects them), so this area never reads their tables.
 */
export function createInvoicesArea(projects: readonly InvoiceProjectsHook[]) {
  const createInvoice = createInvoiceTool(projects);
  const updateInvoice = updateInvoiceTool(projects);
  return defineArea({
    name: 'invoices',
    uses: ['connected-accounts', 'contacts', 'documents', 'leads', 'opportunities'],
    tools: invoiceTools(createInvoice, updateInvoice),
    routes: invoiceRoutes(createInvoice, updateInvoice),
    tags: {
      invoices:
        'Invoices: drafts with priced lines, finalizing (gap-free numbers), payments, void and uncollectible, sending by e-mail with the PDF, the PDF, and the daily overdue flag.',
    },
    brings: invoicesCatalogue,
    permissions: ['invoices.view', 'invoices.create', 'invoices.edit', 'invoices.delete'],
    events: ['invoice.created', 'invoice.paid', 'invoice.sent', 'invoice.overdue'],
    resources: [invoiceResource],
    ...documentAreaParts(invoiceStatusMachine, invoicesOverdue),
  });
}
