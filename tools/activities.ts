// STUB (issue 5, being built): Activities on a lead and the lead timeline.
import type { Tool } from '../core/tool.ts';
import type { TrashType } from '../core/trash.ts';

export const activityTools: Tool[] = [];
export const activityTrashTypes: readonly TrashType[] = [];
