// The registry: an explicit list of every tool. Both surfaces, the manifest and the docs read it.
import type { StateMachine } from '../core/state-machine.ts';
import type { Tool } from '../core/tool.ts';
import { activityTools } from './activities.ts';
import { apiKeyTools } from './api-keys.ts';
import { contactTools } from './contacts.ts';
import { conversationMemoryTools } from './conversation-memory.ts';
import { customActivityTypeTools } from './custom-activity-types.ts';
import { customObjectTools } from './custom-objects.ts';
import { leadHealthTools } from './lead-health.ts';
import { leadTools } from './leads.ts';
import { meTools } from './me.ts';
import { opportunityStatusMachine, opportunityTools } from './opportunities.ts';
import { searchTools } from './search.ts';
import { smartViewTools } from './smart-views.ts';
import { taskCompletionMachine, taskTools } from './tasks.ts';
import { trashTools } from './trash.ts';
import { userTools } from './users.ts';
import { webhookTools } from './webhooks.ts';

export const TOOLS: readonly Tool[] = [
  ...meTools,
  ...leadTools,
  ...contactTools,
  ...opportunityTools,
  ...activityTools,
  ...customActivityTypeTools,
  ...taskTools,
  ...conversationMemoryTools,
  ...leadHealthTools,
  ...smartViewTools,
  ...customObjectTools,
  ...searchTools,
  ...userTools,
  ...apiKeyTools,
  ...trashTools,
  ...webhookTools,
];

/** Every declared status machine (core/state-machine.ts); docs and test/ports/state-machine.test.ts walk this list. */
export const STATE_MACHINES: readonly StateMachine[] = [opportunityStatusMachine, taskCompletionMachine];

export function findTool(name: string): Tool | undefined {
  return TOOLS.find((t) => t.name === name);
}
