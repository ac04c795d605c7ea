import { defineArea } from '../../core/area.ts';
import { invoiceRoutes } from './routes.ts';
import { invoiceStatusMachine } from './store.ts';
import { invoiceTools } from './tools.ts';

/** Invoices: drafts with priced lines, finalizing (gap-free numbers), payments, void, uncollectible. */
export const invoicesArea = defineArea({
  name: 'invoices',
  tools: invoiceTools,
  routes: invoiceRoutes,
  tags: {
    invoices:
      'Invoices: drafts with priced lines, finalizing (gap-free numbers), payments, void and uncollectible.',
  },
  permissions: ['invoices.view', 'invoices.create', 'invoices.edit', 'invoices.delete'],
  events: ['invoice.created', 'invoice.paid'],
  toolsets: ['billing'],
  stateMachines: [invoiceStatusMachine],
});
