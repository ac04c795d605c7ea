import { defineArea } from '../../core/area.ts';
import { projectsCatalogue } from './catalogue.ts';
import { projectInvoiceHooks } from './invoice-hooks.ts';
import { projectRoutes } from './routes.ts';
import { projectStatusMachine } from './store.ts';
import { projectTools } from './tools.ts';

/** Projects: billable work for a client lead, time entries, invoicing the time, the invoicing report. */
export const projectsArea = defineArea({
  name: 'projects',
  uses: ['invoices', 'leads'],
  tools: projectTools,
  routes: projectRoutes,
  tags: {
    projects:
      'Projects for client leads: time entries, invoicing unbilled time into a draft invoice, the invoicing report.',
  },
  brings: projectsCatalogue,
  permissions: ['projects.view', 'projects.create', 'projects.edit', 'projects.delete'],
  // invoice_project creates its draft through the invoices area, which emits invoice.created.
  events: ['invoice.created'],
  toolsets: ['projects'],
  stateMachines: [projectStatusMachine],
  // Invoices are built with these: a project an invoice names, the lines its time put on a draft.
  invoiceProjects: [projectInvoiceHooks],
});
