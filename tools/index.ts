// The registry: an explicit list of every tool. Both surfaces, the manifest and the docs read it.
import type { Tool } from '../core/tool.ts';
import { apiKeyTools } from './api-keys.ts';
import { leadTools } from './leads.ts';
import { meTools } from './me.ts';
import { trashTools } from './trash.ts';
import { userTools } from './users.ts';
import { webhookTools } from './webhooks.ts';

export const TOOLS: readonly Tool[] = [
  ...meTools,
  ...leadTools,
  ...userTools,
  ...apiKeyTools,
  ...trashTools,
  ...webhookTools,
];

export function findTool(name: string): Tool | undefined {
  return TOOLS.find((t) => t.name === name);
}
