// STUB (issue 5, being built).
import type { Route } from '../route.ts';

export const conversationMemoryRoutes: Route[] = [];
