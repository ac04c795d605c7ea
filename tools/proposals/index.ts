import { defineArea } from '../../core/area.ts';
import { documentAreaParts } from '../documents/area.ts';
import { proposalsCatalogue } from './catalogue.ts';
import { proposalsExpiry } from './jobs.ts';
import { proposalPublicRoutes } from './public.ts';
import { proposalRoutes } from './routes.ts';
import { proposalStatusMachine } from './store.ts';
import { proposalTools } from './tools.ts';

/** Proposals: sections and optional prices, a public page to accept (and sign) or decline, discovery questions. */
export const proposalsArea = defineArea({
  name: 'proposals',
  uses: [
    'connected-accounts',
    'contacts',
    'conversation-memory',
    'documents',
    'invoices',
    'leads',
    'opportunities',
  ],
  tools: proposalTools,
  routes: proposalRoutes,
  tags: {
    proposals:
      'Proposals: drafts with Markdown sections and optional prices, sending a link to the public page where the lead accepts (and signs) or declines, and discovery questions.',
    'proposal-ai':
      'Proposal assistance: discovery questions for a proposal, from a configured model or from rules.',
  },
  brings: proposalsCatalogue,
  permissions: ['proposals.view', 'proposals.create', 'proposals.edit', 'proposals.delete'],
  events: ['proposal.sent', 'proposal.accepted', 'proposal.declined', 'contract.signed'],
  ...documentAreaParts(proposalStatusMachine, proposalsExpiry),
  publicRoutes: proposalPublicRoutes,
});
