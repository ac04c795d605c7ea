// Lead routes: the collection, one lead, conversion and the bulk operations.
import {
  bulkTagLeads,
  bulkUpsertLeads,
  convertLeadToClient,
  createLead,
  deleteLead,
  getLead,
  listLeads,
  replaceLead,
  updateLead,
} from '../../tools/leads.ts';
import { type Route, route } from '../route.ts';

export const leadRoutes: Route[] = [
  route('GET', '/leads', listLeads),
  route('POST', '/leads', createLead),
  route('POST', '/leads/bulk', bulkUpsertLeads, { limits: ['bulk'] }),
  route('POST', '/leads/bulk/tags', bulkTagLeads, { limits: ['bulk'] }),
  route('GET', '/leads/:id', getLead),
  route('PUT', '/leads/:id', replaceLead),
  route('PATCH', '/leads/:id', updateLead),
  route('DELETE', '/leads/:id', deleteLead),
  route('POST', '/leads/:id/convert-to-client', convertLeadToClient),
];
