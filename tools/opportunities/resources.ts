// Opportunities as MCP resources (crm://opportunities/{id}), read through get_opportunity and listed
// through list_opportunities.
import { defineRecordResource, textField } from '../../core/resources.ts';
import { getOpportunity, listOpportunities } from './tools.ts';

export const opportunityResource = defineRecordResource({
  collection: 'opportunities',
  title: 'Opportunity',
  description:
    'An opportunity (deal) on a lead as get_opportunity answers it: value, confidence, stage, status, expected close date.',
  get: getOpportunity,
  list: listOpportunities,
  items: 'opportunities',
  recentSort: '-updated_at',
  label: (deal) => {
    const amount = `${String(deal.value)} ${textField(deal, 'currency') ?? ''}`.trim();
    const stage = textField(deal, 'pipeline_stage') ?? textField(deal, 'status') ?? '';
    return stage ? `${amount}, ${stage}` : amount;
  },
});
