import type { Tool } from '../core/tool.ts';

export const leadTools: Tool[] = [];
