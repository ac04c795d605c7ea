import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import {
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  replayWebhookDelivery,
  testWebhook,
} from './tools.ts';

/** The route table; create and update are built by the area (they need the catalogue's event names). */
export function webhookRoutes(built: { createWebhook: Tool; updateWebhook: Tool }): Route[] {
  return [
    route('POST', '/webhooks', built.createWebhook),
    route('GET', '/webhooks', listWebhooks),
    route('GET', '/webhooks/:id', getWebhook),
    route('PUT', '/webhooks/:id', built.updateWebhook),
    route('DELETE', '/webhooks/:id', deleteWebhook),
    route('POST', '/webhooks/test/:id', testWebhook),
    route('GET', '/webhooks/:id/deliveries', listWebhookDeliveries),
    route('POST', '/webhooks/deliveries/:deliveryId/replay', replayWebhookDelivery),
  ];
}
