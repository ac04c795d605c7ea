// The registry of record types a user can own: deleting a user transfers or trashes each of them
// (core/ownership.ts). A new owned resource adds its entry here.
import type { OwnedRecordTable } from '../core/ownership.ts';
import { customObjectRecordOwnership } from './custom-objects.ts';
import { leadOwnership } from './leads.ts';
import { opportunityOwnership } from './opportunities.ts';
import { taskOwnership } from './tasks.ts';

export const OWNED_TYPES: readonly OwnedRecordTable[] = [
  leadOwnership,
  ...opportunityOwnership,
  ...taskOwnership,
  ...customObjectRecordOwnership,
];
