import type { Route } from '../route.ts';

export const leadRoutes: Route[] = [];
