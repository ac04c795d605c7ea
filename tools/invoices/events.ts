// The events the invoices area emits, with the payload each carries: the invoice as `get_invoice`
// returns it, plus what the event adds. The schemas document the webhooks section of the OpenAPI
// document, and the declaration merging below makes `emit` check every payload at compile time.
import { z } from 'zod';
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';
import { INVOICE_STATUSES, invoiceSchema } from './store.ts';

export const invoicesEvents = {
  'invoice.created': invoiceSchema,
  'invoice.sent': invoiceSchema.extend({
    sent_to: z.string().describe('The address the invoice was mailed to'),
    mail_id: z.string().describe('The queued mail that carries the PDF'),
  }),
  'invoice.paid': invoiceSchema.extend({
    previous_status: z
      .enum(INVOICE_STATUSES)
      .describe('The status before the payment that completed it (open or uncollectible)'),
  }),
  'invoice.overdue': invoiceSchema.extend({
    today: z.string().describe('The UTC day (YYYY-MM-DD) the invoice was found past its due date'),
  }),
} satisfies EventSchemas;

type InvoicesEvents = PayloadsOf<typeof invoicesEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends InvoicesEvents {}
}
