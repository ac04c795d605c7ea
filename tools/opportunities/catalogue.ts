// What the opportunities area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts), and the MCP toolset it introduces (core/toolsets.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { opportunitiesEvents } from './events.ts';

export const opportunitiesCatalogue = {
  permissions: {
    'opportunities.view': 'read',
    'opportunities.create': 'write',
    'opportunities.edit': 'write',
    'opportunities.delete': 'manage',
  },
  toolsets: {
    sales:
      'The rest of the sales records: deleting contacts, opportunities, activities and tasks, reading and editing single activities, listing every task, snoozing tasks, editing conversation memory, and forecast accuracy (needs a plan with forecasting).',
  },
  events: opportunitiesEvents,
} as const satisfies AreaCatalogue;

type OpportunitiesPermissions = (typeof opportunitiesCatalogue)['permissions'];

type OpportunitiesToolsets = (typeof opportunitiesCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends OpportunitiesToolsets {}
}

declare module '../../core/access.ts' {
  interface PermissionCatalog extends OpportunitiesPermissions {}
}
