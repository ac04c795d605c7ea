import type { Route } from '../route.ts';

export const apiKeyRoutes: Route[] = [];
