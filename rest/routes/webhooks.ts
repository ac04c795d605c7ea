import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  replayWebhookDelivery,
  testWebhook,
  updateWebhook,
} from '../../tools/webhooks.ts';
import { type Route, route } from '../route.ts';

export const webhookRoutes: Route[] = [
  route('POST', '/webhooks', createWebhook),
  route('GET', '/webhooks', listWebhooks),
  route('GET', '/webhooks/:id', getWebhook),
  route('PUT', '/webhooks/:id', updateWebhook),
  route('DELETE', '/webhooks/:id', deleteWebhook),
  route('POST', '/webhooks/test/:id', testWebhook),
  route('GET', '/webhooks/:id/deliveries', listWebhookDeliveries),
  route('POST', '/webhooks/deliveries/:deliveryId/replay', replayWebhookDelivery),
];
