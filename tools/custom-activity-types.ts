// STUB (issue 5, being built): Custom activity types.
import type { Tool } from '../core/tool.ts';

export const customActivityTypeTools: Tool[] = [];
