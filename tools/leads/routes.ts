// Lead routes: the collection, one lead, conversion and the bulk operations.

import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import {
  bulkTagLeads,
  bulkUpsertLeads,
  createLead,
  getLead,
  listLeads,
  replaceLead,
  updateLead,
} from './tools.ts';

/**
 * `deleteLead` is built with the registry of lead children, `convertLeadToClient` with the
 * leadConverted hooks (tools/leads/index.ts).
 */
export function leadRoutes(deleteLead: Tool, convertLeadToClient: Tool): Route[] {
  return [
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
}
