// Lead health route: the score of one lead with its factors.

import { type Route, route } from '../../core/route.ts';
import { getLeadHealth } from './tools.ts';

export const leadHealthRoutes: Route[] = [route('GET', '/leads/:id/health', getLeadHealth)];
