import type { RoleTable } from '../../core/access.ts';
import { defineArea, type SearchSource } from '../../core/area.ts';
import { searchRoutes } from './routes.ts';
import { searchCrmTool } from './tools.ts';

/**
 * One ranked search over every record type the areas declare in `searchSources`. `access` gives the
 * role table at call time: it is built from the area list this area is part of.
 */
export function createSearchArea(sources: readonly SearchSource[], access: () => RoleTable) {
  const searchCrm = searchCrmTool(sources, access);
  return defineArea({
    name: 'search',
    tools: [searchCrm],
    routes: searchRoutes(searchCrm),
    tags: { search: 'One search across leads, contacts and opportunities.' },
    permissions: ['leads.view'],
    events: [],
    toolsets: ['core'],
  });
}
