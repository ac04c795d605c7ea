// Lead health route: the score of one lead with its factors.
import { getLeadHealth } from '../../tools/lead-health.ts';
import { type Route, route } from '../route.ts';

export const leadHealthRoutes: Route[] = [route('GET', '/leads/:id/health', getLeadHealth)];
