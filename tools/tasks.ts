// STUB (issue 5, being built): Tasks.
import type { OwnedRecordTable } from '../core/ownership.ts';
import type { Tool } from '../core/tool.ts';
import type { TrashType } from '../core/trash.ts';

export const taskTools: Tool[] = [];
export const taskTrashTypes: readonly TrashType[] = [];
export const taskOwnership: readonly OwnedRecordTable[] = [];
