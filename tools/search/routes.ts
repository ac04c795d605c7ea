// Global search route: one ranked list over leads, contacts and opportunities.
import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';

/** `searchCrm` is built with the areas' search sources (tools/search/index.ts). */
export function searchRoutes(searchCrm: Tool): Route[] {
  return [route('GET', '/search', searchCrm)];
}
