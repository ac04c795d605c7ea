import { type Area, defineArea, type SearchSource } from '../../core/area.ts';
import { searchRoutes } from './routes.ts';
import { searchCrmTool } from './tools.ts';

/** One ranked search over every record type the areas declare in `searchSources`. */
export function createSearchArea(sources: readonly SearchSource[]): Area {
  const searchCrm = searchCrmTool(sources);
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
