// STUB (issue 5, being built): Lead health score.
import type { Tool } from '../core/tool.ts';

export const leadHealthTools: Tool[] = [];
