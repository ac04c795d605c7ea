import { defineArea } from '../../core/area.ts';
import type { EventName } from '../../core/events.ts';
import { webhooksCatalogue } from './catalogue.ts';
import { deliverWebhookBatchJob, deliverWebhookJob, deliverySweep } from './deliver.ts';
import { outboxRelay } from './relay.ts';
import { webhookRoutes } from './routes.ts';
import {
  createWebhookTool,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  replayWebhookDelivery,
  testWebhook,
  updateWebhookTool,
} from './tools.ts';

/**
 * Subscriptions that receive signed events, their delivery log and replays; the relay of committed
 * events to deliveries, the signed delivery with its retries and the sweep of lost wake-ups. Built
 * from the catalogue's event names (what a subscription may list), which tools/index.ts builds
 * first with this area's declaration in its place.
 */
export function createWebhooksArea(events: readonly EventName[]) {
  const createWebhook = createWebhookTool(events);
  const updateWebhook = updateWebhookTool(events);
  return defineArea({
    name: 'webhooks',
    tools: [
      createWebhook,
      listWebhooks,
      getWebhook,
      updateWebhook,
      deleteWebhook,
      testWebhook,
      listWebhookDeliveries,
      replayWebhookDelivery,
    ],
    routes: webhookRoutes({ createWebhook, updateWebhook }),
    tags: {
      webhooks: 'Subscriptions that POST signed events to your https:// URL, their delivery log and replays.',
    },
    brings: webhooksCatalogue,
    permissions: [
      'settings.webhooks.view_global',
      'settings.webhooks.view_own',
      'settings.webhooks.create',
      'settings.webhooks.edit',
      'settings.webhooks.delete',
    ],
    events: ['webhook.test'],
    toolsets: ['webhooks'],
    jobs: [deliverWebhookJob, deliverWebhookBatchJob],
    sweeps: [deliverySweep],
    relays: [outboxRelay],
  });
}
