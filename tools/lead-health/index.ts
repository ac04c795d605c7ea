import { defineArea } from '../../core/area.ts';
import { leadHealthRoutes } from './routes.ts';
import { leadHealthTools } from './tools.ts';

/** A lead's health score and its reasons (a route under the leads tag). */
export const leadHealthArea = defineArea({
  name: 'lead-health',
  uses: ['activities', 'conversation-memory', 'leads', 'opportunities', 'tasks'],
  tools: leadHealthTools,
  routes: leadHealthRoutes,
  tags: {},
  permissions: ['leads.view'],
  events: [],
  toolsets: ['core'],
});
