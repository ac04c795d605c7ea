// The REST route table: METHOD path -> tool, one file per resource area.
import type { Route } from '../route.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { leadRoutes } from './leads.ts';
import { meRoutes } from './me.ts';
import { trashRoutes } from './trash.ts';
import { userRoutes } from './users.ts';
import { webhookRoutes } from './webhooks.ts';

export const ROUTES: readonly Route[] = [
  ...meRoutes,
  ...leadRoutes,
  ...userRoutes,
  ...apiKeyRoutes,
  ...trashRoutes,
  ...webhookRoutes,
];
