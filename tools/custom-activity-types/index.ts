import { defineArea } from '../../core/area.ts';
import { customActivityTypesCatalogue } from './catalogue.ts';
import { customActivityTypeRoutes } from './routes.ts';
import { customActivityTypeTools } from './tools.ts';

/** Activity types an organization designs, with their fields. */
export const customActivityTypesArea = defineArea({
  name: 'custom-activity-types',
  tools: customActivityTypeTools,
  routes: customActivityTypeRoutes,
  tags: { 'custom-activity-types': 'Activity types of your own, with their fields (a plan feature).' },
  brings: customActivityTypesCatalogue,
  permissions: ['activities.view', 'settings.custom_activity_types.manage'],
  events: [],
  toolsets: ['customization'],
});
