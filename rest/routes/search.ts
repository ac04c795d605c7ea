// Global search route: one ranked list over leads, contacts and opportunities.
import { searchCrm } from '../../tools/search.ts';
import { type Route, route } from '../route.ts';

export const searchRoutes: Route[] = [route('GET', '/search', searchCrm)];
