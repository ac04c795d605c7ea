import { defineArea } from '../../core/area.ts';
import { meRoutes } from './routes.ts';
import { meTools } from './tools.ts';

/** The caller: who they are, their organization, plan features and token. */
export const meArea = defineArea({
  name: 'me',
  tools: meTools,
  routes: meRoutes,
  tags: { me: 'The caller: user, organization, plan features and token kind.' },
  permissions: [],
  events: [],
  toolsets: ['core'],
});
