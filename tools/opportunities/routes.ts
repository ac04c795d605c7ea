// Opportunity routes: the collection and one deal. PUT merges exactly like PATCH, the same decision
// as for contacts (both run update_opportunity).

import { type Route, route } from '../../core/route.ts';
import {
  createOpportunity,
  deleteOpportunity,
  getOpportunity,
  listOpportunities,
  updateOpportunity,
} from './tools.ts';

export const opportunityRoutes: Route[] = [
  route('GET', '/opportunities', listOpportunities),
  route('POST', '/opportunities', createOpportunity),
  route('GET', '/opportunities/:id', getOpportunity),
  route('PATCH', '/opportunities/:id', updateOpportunity),
  route('PUT', '/opportunities/:id', updateOpportunity),
  route('DELETE', '/opportunities/:id', deleteOpportunity),
];
