// STUB (issue 5, being built): Custom objects and their records.
import type { OwnedRecordTable } from '../core/ownership.ts';
import type { Tool } from '../core/tool.ts';
import type { TrashType } from '../core/trash.ts';

export const customObjectTools: Tool[] = [];
export const customObjectRecordTrashTypes: readonly TrashType[] = [];
export const customObjectRecordOwnership: readonly OwnedRecordTable[] = [];
