// The events the messages area emits, with their payloads: `sms.sent` when the provider accepted an
// outbound SMS or WhatsApp message (in the transaction that records its SID), and `sms.received`
// once per provider message when an inbound one is recorded. The schema documents the webhooks
// section of the OpenAPI document, and the declaration merging below makes `emit` check the payload
// at compile time. (Both names were reserved by tools/reserved.ts until this area was built.)
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';
import { messageSchema } from './store.ts';

export const messagesEvents = {
  'sms.sent': messageSchema.describe(
    'An SMS or WhatsApp message the provider accepted (status as it answered: queued, sending or sent; later statuses follow on the message)',
  ),
  'sms.received': messageSchema.describe(
    'An inbound SMS or WhatsApp message, with the lead whose contact has the sender number (null when none)',
  ),
} satisfies EventSchemas;

type MessagesEvents = PayloadsOf<typeof messagesEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends MessagesEvents {}
}
