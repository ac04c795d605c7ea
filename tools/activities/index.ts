import { defineArea } from '../../core/area.ts';
import { leadChild } from '../leads/children.ts';
import { activitiesCatalogue } from './catalogue.ts';
import { activityRoutes } from './routes.ts';
import { activityTrashTypes } from './store.ts';
import { activities } from './tables.ts';
import { activityTools } from './tools.ts';
import { activitiesOfCustomType } from './type-changes.ts';

/** A lead's timeline: notes, calls, e-mails, meetings and custom activities. */
export const activitiesArea = defineArea({
  name: 'activities',
  uses: ['contacts', 'custom-activity-types', 'custom-objects', 'leads'],
  tools: activityTools,
  routes: activityRoutes,
  tags: { activities: "A lead's timeline: notes, calls, e-mails, meetings and custom activities." },
  brings: activitiesCatalogue,
  permissions: ['activities.view', 'activities.create', 'activities.edit', 'activities.delete'],
  events: ['activity.created', 'call.completed'],
  toolsets: ['core', 'sales'],
  trashTypes: activityTrashTypes,
  leadChildren: [leadChild(activities)],
  customActivityTypeChanging: [activitiesOfCustomType],
});
