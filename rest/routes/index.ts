// The REST route table: METHOD path -> tool, one file per resource area.
import type { Route } from '../route.ts';
import { activityRoutes } from './activities.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { contactRoutes } from './contacts.ts';
import { conversationMemoryRoutes } from './conversation-memory.ts';
import { customActivityTypeRoutes } from './custom-activity-types.ts';
import { customObjectRoutes } from './custom-objects.ts';
import { leadHealthRoutes } from './lead-health.ts';
import { leadRoutes } from './leads.ts';
import { meRoutes } from './me.ts';
import { opportunityRoutes } from './opportunities.ts';
import { searchRoutes } from './search.ts';
import { smartViewRoutes } from './smart-views.ts';
import { taskRoutes } from './tasks.ts';
import { trashRoutes } from './trash.ts';
import { userRoutes } from './users.ts';
import { webhookRoutes } from './webhooks.ts';

export const ROUTES: readonly Route[] = [
  ...meRoutes,
  ...leadRoutes,
  ...contactRoutes,
  ...opportunityRoutes,
  ...activityRoutes,
  ...customActivityTypeRoutes,
  ...taskRoutes,
  ...conversationMemoryRoutes,
  ...leadHealthRoutes,
  ...smartViewRoutes,
  ...customObjectRoutes,
  ...searchRoutes,
  ...userRoutes,
  ...apiKeyRoutes,
  ...trashRoutes,
  ...webhookRoutes,
];
