import { defineArea, type LeadConvertedHook } from '../../core/area.ts';
import type { ChildTable } from '../../core/trash.ts';
import { leadsCatalogue } from './catalogue.ts';
import { leadPrompts } from './prompts.ts';
import { leadResource } from './resources.ts';
import { leadRoutes } from './routes.ts';
import { leadSearchSource } from './search.ts';
import { leadOwnership, leadTrashType } from './store.ts';
import {
  bulkTagLeads,
  bulkUpsertLeads,
  convertLeadToClientTool,
  createLead,
  deleteLeadTool,
  getLead,
  listLeads,
  replaceLead,
  updateLead,
} from './tools.ts';

/**
 * Leads, the open-shaped core record. Built with the other areas' lead children (tools/index.ts
 * collects them), which follow a lead into the trash and back, and their leadConverted hooks, which
 * run when a lead is converted to a client.
 */
export function createLeadsArea(
  children: readonly ChildTable[],
  converted: readonly LeadConvertedHook[] = [],
) {
  const deleteLead = deleteLeadTool(children);
  const convertLeadToClient = convertLeadToClientTool(converted);
  return defineArea({
    name: 'leads',
    tools: [
      listLeads,
      getLead,
      createLead,
      replaceLead,
      updateLead,
      deleteLead,
      convertLeadToClient,
      bulkUpsertLeads,
      bulkTagLeads,
    ],
    routes: leadRoutes(deleteLead, convertLeadToClient),
    tags: { leads: 'Leads, with any additional properties of their own; bulk upsert and bulk tagging.' },
    brings: leadsCatalogue,
    permissions: ['leads.view', 'leads.create', 'leads.edit', 'leads.delete'],
    events: ['lead.created', 'lead.updated', 'lead.deleted', 'lead.status_changed'],
    toolsets: ['core'],
    trashTypes: [leadTrashType(children)],
    ownedRecords: [leadOwnership(children)],
    searchSources: [leadSearchSource],
    resources: [leadResource],
    prompts: leadPrompts,
  });
}
