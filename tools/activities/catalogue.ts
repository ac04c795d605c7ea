// What the activities area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts), and the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { activitiesEvents } from './events.ts';

export const activitiesCatalogue = {
  permissions: {
    'activities.view': 'read',
    'activities.create': 'write',
    'activities.edit': 'write',
    // Members log and tidy their own day: notes and calls are theirs to delete too.
    'activities.delete': 'write',
  },
  events: activitiesEvents,
} as const satisfies AreaCatalogue;

type ActivitiesPermissions = (typeof activitiesCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends ActivitiesPermissions {}
}
