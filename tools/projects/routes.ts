// Project routes: the collection, one project (PUT merges exactly like PATCH), its time entries
// under /projects/{id}/time-entries/{entryId}, invoicing its time and its invoicing report.
import { type Route, route } from '../../core/route.ts';
import {
  createProject,
  deleteProjectTool,
  deleteTimeEntry,
  getProject,
  getProjectInvoicingReport,
  getTimeEntry,
  invoiceProject,
  listProjects,
  listTimeEntries,
  logTimeEntry,
  updateProject,
  updateTimeEntry,
} from './tools.ts';

export const projectRoutes: Route[] = [
  route('GET', '/projects', listProjects),
  route('POST', '/projects', createProject),
  route('GET', '/projects/:id', getProject),
  route('PATCH', '/projects/:id', updateProject),
  route('PUT', '/projects/:id', updateProject),
  route('DELETE', '/projects/:id', deleteProjectTool),
  route('GET', '/projects/:id/time-entries', listTimeEntries),
  route('POST', '/projects/:id/time-entries', logTimeEntry, { status: 201 }),
  route('GET', '/projects/:id/time-entries/:entryId', getTimeEntry),
  route('PATCH', '/projects/:id/time-entries/:entryId', updateTimeEntry),
  route('PUT', '/projects/:id/time-entries/:entryId', updateTimeEntry),
  route('DELETE', '/projects/:id/time-entries/:entryId', deleteTimeEntry),
  route('POST', '/projects/:id/invoice', invoiceProject, { status: 201 }),
  route('GET', '/projects/:id/invoicing-report', getProjectInvoicingReport),
];
