// STUB (issue 5, being built): Opportunities: deals on a lead.
import type { OwnedRecordTable } from '../core/ownership.ts';
import type { Tool } from '../core/tool.ts';
import type { TrashType } from '../core/trash.ts';

export const opportunityTools: Tool[] = [];
export const opportunityTrashTypes: readonly TrashType[] = [];
export const opportunityOwnership: readonly OwnedRecordTable[] = [];
