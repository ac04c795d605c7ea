// The event the connected-accounts area emits, with its payload: an inbound mail taken in through a
// connected account, with the lead, contact and activity it was matched to. The schema documents
// the webhooks section of the OpenAPI document, and the declaration merging below makes `emit`
// check the payload at compile time.
import { z } from 'zod';
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';

export const connectedAccountsEvents = {
  'email.received': z
    .object({
      inbound_email_id: z.string().describe('The inbound email recorded'),
      connected_account_id: z.string().describe('The connected account it arrived through'),
      lead_id: z.string().nullable().describe('The lead it was matched to, or null'),
      contact_id: z.string().nullable().describe('The contact it was matched to, or null'),
      from: z.string().describe('Sender address'),
      to: z.string().describe('The To field as received'),
      subject: z.string().describe('Subject line (empty when the mail had none)'),
      message_id: z.string().describe('Its Message-ID header'),
      in_reply_to: z.string().nullable().describe('Its In-Reply-To header, or null'),
      replies_to_email_id: z.string().nullable().describe('The scheduled email it answers, or null'),
      activity_id: z.string().nullable().describe('The inbound email activity recorded on the lead, or null'),
      received_at: z.string().describe('When it was taken in (ISO 8601)'),
    })
    .describe('An email received through a connected account'),
} satisfies EventSchemas;

type ConnectedAccountsEvents = PayloadsOf<typeof connectedAccountsEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends ConnectedAccountsEvents {}
}
