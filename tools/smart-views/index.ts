import { defineArea } from '../../core/area.ts';
import { smartViewsCatalogue } from './catalogue.ts';
import { smartViewRoutes } from './routes.ts';
import { smartViewTools } from './tools.ts';

/** Saved lead filters (their query language is in query/) and running them. */
export const smartViewsArea = defineArea({
  name: 'smart-views',
  uses: ['activities', 'contacts', 'custom-activity-types', 'leads', 'opportunities', 'tasks'],
  tools: smartViewTools,
  routes: smartViewRoutes,
  tags: { 'smart-views': 'Saved lead filters and the leads that match them now (a plan feature).' },
  brings: smartViewsCatalogue,
  permissions: ['smart_views.view', 'smart_views.create', 'smart_views.edit', 'smart_views.manage_shared'],
  events: [],
  toolsets: ['core', 'views'],
});
