// Leads as MCP resources (crm://leads/{id}), read through get_lead and listed through list_leads.
import { defineRecordResource, textField } from '../../core/resources.ts';
import { getLead, listLeads } from './tools.ts';

export const leadResource = defineRecordResource({
  collection: 'leads',
  title: 'Lead',
  description:
    'A lead (a company or person being sold to) as get_lead answers it, additional properties included.',
  get: getLead,
  list: listLeads,
  items: 'leads',
  recentSort: '-updated_at',
  label: (lead) => textField(lead, 'name') ?? 'Lead',
});
