import type { Tool } from '../core/tool.ts';

export const userTools: Tool[] = [];
