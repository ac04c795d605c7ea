import type { Tool } from '../core/tool.ts';

export const apiKeyTools: Tool[] = [];
