import { defineArea } from '../../core/area.ts';
import { leadChild } from '../leads/children.ts';
import { opportunitiesCatalogue } from './catalogue.ts';
import { refuseMoveOfLinkedContact } from './contact-links.ts';
import { opportunityPrompts } from './prompts.ts';
import { opportunityResource } from './resources.ts';
import { opportunityRoutes } from './routes.ts';
import { opportunitySearchSource } from './search.ts';
import { opportunityOwnership, opportunityStatusMachine, opportunityTrashTypes } from './store.ts';
import { opportunities } from './tables.ts';
import { opportunityTools } from './tools.ts';

/** Deals on a lead, with their status machine (active, won, lost). */
export const opportunitiesArea = defineArea({
  name: 'opportunities',
  uses: ['contacts', 'leads'],
  tools: opportunityTools,
  routes: opportunityRoutes,
  tags: {
    opportunities: 'Deals on a lead: value, confidence, pipeline stage and status (active, won, lost).',
  },
  brings: opportunitiesCatalogue,
  permissions: ['opportunities.view', 'opportunities.create', 'opportunities.edit', 'opportunities.delete'],
  events: ['opportunity.created', 'opportunity.updated', 'opportunity.won', 'opportunity.lost'],
  toolsets: ['core', 'sales'],
  trashTypes: opportunityTrashTypes,
  ownedRecords: opportunityOwnership,
  leadChildren: [leadChild(opportunities)],
  searchSources: [opportunitySearchSource],
  resources: [opportunityResource],
  prompts: opportunityPrompts,
  stateMachines: [opportunityStatusMachine],
  contactMoving: [refuseMoveOfLinkedContact],
});
