// STUB (issue 5, being built): Global search across leads, contacts and opportunities.
import type { Tool } from '../core/tool.ts';

export const searchTools: Tool[] = [];
