import { defineArea } from '../../core/area.ts';
import { documentAreaParts } from '../documents/area.ts';
import { estimatesCatalogue } from './catalogue.ts';
import { estimatesExpiry } from './jobs.ts';
import { estimateRoutes } from './routes.ts';
import { estimateStatusMachine } from './store.ts';
import { estimateTools } from './tools.ts';

/** Estimates: numbered quotes with priced lines, sent, accepted or declined, expiring, converted to invoices. */
export const estimatesArea = defineArea({
  name: 'estimates',
  uses: ['connected-accounts', 'contacts', 'documents', 'invoices', 'leads', 'opportunities'],
  tools: estimateTools,
  routes: estimateRoutes,
  tags: {
    estimates:
      'Estimates (plan feature estimates): numbered quotes with priced lines; send, accept, decline, daily expiry and conversion into a draft invoice.',
  },
  brings: estimatesCatalogue,
  permissions: ['estimates.view', 'estimates.create', 'estimates.edit', 'estimates.delete'],
  // convert-to-invoice creates the invoice through the invoices area, which emits invoice.created.
  events: ['invoice.created'],
  ...documentAreaParts(estimateStatusMachine, estimatesExpiry),
});
