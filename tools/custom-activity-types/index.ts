import { type CustomActivityTypeChangingHook, defineArea } from '../../core/area.ts';
import { customActivityTypesCatalogue } from './catalogue.ts';
import { customActivityTypeRoutes } from './routes.ts';
import { customActivityTypeTools, typeChangeTools } from './tools.ts';

/**
 * Activity types an organization designs, with their fields. Built with the hooks of the areas
 * holding records of a type (tools/index.ts collects them: tools/activities), which decide what a
 * change of the type does to those records, so this area never reads their tables.
 */
export function createCustomActivityTypesArea(hooks: readonly CustomActivityTypeChangingHook[]) {
  const changes = typeChangeTools(hooks);
  return defineArea({
    name: 'custom-activity-types',
    uses: ['custom-objects'],
    tools: customActivityTypeTools(changes),
    routes: customActivityTypeRoutes(changes),
    tags: { 'custom-activity-types': 'Activity types of your own, with their fields (a plan feature).' },
    brings: customActivityTypesCatalogue,
    permissions: ['activities.view', 'settings.custom_activity_types.manage'],
    events: [],
    toolsets: ['customization'],
  });
}
