// STUB (issue 5, being built): Smart views.
import type { Tool } from '../core/tool.ts';

export const smartViewTools: Tool[] = [];
