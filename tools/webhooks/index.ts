import { defineArea } from '../../core/area.ts';
import { webhooksCatalogue } from './catalogue.ts';
import { deliverWebhookJob, deliverySweep } from './deliver.ts';
import { outboxRelay } from './relay.ts';
import { webhookRoutes } from './routes.ts';
import { webhookTools } from './tools.ts';

/**
 * Subscriptions that receive signed events, their delivery log and replays; the relay of committed
 * events to deliveries, the signed delivery with its retries and the sweep of lost wake-ups.
 */
export const webhooksArea = defineArea({
  name: 'webhooks',
  tools: webhookTools,
  routes: webhookRoutes,
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
  jobs: [deliverWebhookJob],
  sweeps: [deliverySweep],
  relays: [outboxRelay],
});
