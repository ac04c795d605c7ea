import type { Route } from '../route.ts';

export const userRoutes: Route[] = [];
