// STUB (issue 5, being built): Contacts: the people at a lead.
import type { Tool } from '../core/tool.ts';
import type { TrashType } from '../core/trash.ts';

export const contactTools: Tool[] = [];
export const contactTrashTypes: readonly TrashType[] = [];
