// STUB (issue 5, being built): Conversation memory of a lead.
import type { Tool } from '../core/tool.ts';

export const conversationMemoryTools: Tool[] = [];
