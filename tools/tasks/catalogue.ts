// What the tasks area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts), and the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { tasksEvents } from './events.ts';

export const tasksCatalogue = {
  permissions: {
    'tasks.view': 'read',
    'tasks.create': 'write',
    'tasks.edit': 'write',
    // Members delete their own tasks, like their activities.
    'tasks.delete': 'write',
  },
  events: tasksEvents,
  // The plan feature its tools need, with the lowest plan that has it (core/access.ts PLANS).
  features: { task_snooze: 'starter' },
} as const satisfies AreaCatalogue;

type TasksPermissions = (typeof tasksCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends TasksPermissions {}
}

type TasksFeatures = (typeof tasksCatalogue)['features'];

declare module '../../core/access.ts' {
  interface FeatureCatalog extends TasksFeatures {}
}
