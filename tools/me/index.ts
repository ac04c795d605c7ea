import type { PlanTable } from '../../core/access.ts';
import { defineArea } from '../../core/area.ts';
import { meRoutes } from './routes.ts';
import { getMeTool } from './tools.ts';

/**
 * The caller: who they are, their organization, plan features and token. Built with a getter of
 * the plan table (the catalogue), which /me reads when called.
 */
export function createMeArea(plans: () => PlanTable) {
  const getMe = getMeTool(plans);
  return defineArea({
    name: 'me',
    tools: [getMe],
    routes: meRoutes({ getMe }),
    tags: { me: 'The caller: user, organization, plan features and token kind.' },
    permissions: [],
    events: [],
    toolsets: ['core'],
  });
}
