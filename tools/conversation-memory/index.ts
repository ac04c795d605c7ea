import { defineArea } from '../../core/area.ts';
import { conversationMemoryRoutes } from './routes.ts';
import { conversationMemoryTools } from './tools.ts';

/** What was said with a lead and the promises made (routes under the leads tag). */
export const conversationMemoryArea = defineArea({
  name: 'conversation-memory',
  uses: ['leads'],
  tools: conversationMemoryTools,
  routes: conversationMemoryRoutes,
  tags: {},
  permissions: ['leads.view', 'leads.edit'],
  events: [],
  toolsets: ['core', 'sales'],
});
