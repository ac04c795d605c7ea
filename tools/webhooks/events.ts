// The event the webhooks area sends, with its payload: `webhook.test`, which only the test tool
// sends (straight to one subscription's log, never through the outbox). The schema documents the
// webhooks section of the OpenAPI document, and the declaration merging below keeps the name in
// the compile-time catalogue.
import { z } from 'zod';
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';

export const webhooksEvents = {
  'webhook.test': z
    .object({
      webhook_id: z.string().describe('The subscription tested'),
      message: z.string().describe('A fixed text saying this is a test delivery'),
      sent_by: z.string().describe('The user who asked for the test'),
    })
    .describe('A test delivery'),
} satisfies EventSchemas;

type WebhooksEvents = PayloadsOf<typeof webhooksEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends WebhooksEvents {}
}
