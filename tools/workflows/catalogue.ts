// What the workflows area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). It also brings the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { workflowsEvents } from './events.ts';

export const workflowsCatalogue = {
  permissions: {
    'workflows.view': 'read',
    'workflows.create': 'write',
    'workflows.edit': 'write',
    'workflows.delete': 'manage',
    'workflows.enroll': 'write',
    // Edit, pause, activate or delete a workflow someone else created (everyone may change their own).
    'workflows.manage_any': 'manage',
  },
  events: workflowsEvents,
} as const satisfies AreaCatalogue;

type WorkflowsPermissions = (typeof workflowsCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends WorkflowsPermissions {}
}
