import { type Route, route } from '../../core/route.ts';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  replayWebhookDelivery,
  testWebhook,
  updateWebhook,
} from './tools.ts';

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
