// What the proposals area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). It also brings the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { proposalsEvents } from './events.ts';

export const proposalsCatalogue = {
  permissions: {
    'proposals.view': 'read',
    'proposals.create': 'write',
    'proposals.edit': 'write',
    'proposals.delete': 'manage',
  },
  events: proposalsEvents,
} as const satisfies AreaCatalogue;

type ProposalsPermissions = (typeof proposalsCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends ProposalsPermissions {}
}
