import type { Route } from '../route.ts';

export const trashRoutes: Route[] = [];
