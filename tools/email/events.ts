// The event the email area emits, with its payload: the scheduled email as `get_scheduled_email`
// returns it once sent or failed, plus the reason of a failure. The schema documents the webhooks
// section of the OpenAPI document, and the declaration merging below makes `emit` check the payload
// at compile time.
import { z } from 'zod';
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';
import { scheduledEmailSchema } from './store.ts';

export const emailEvents = {
  'email.sent': scheduledEmailSchema.extend({
    reason: z
      .string()
      .nullable()
      .optional()
      .describe('Only on a failed email (status failed): why it was not sent'),
  }),
} satisfies EventSchemas;

type EmailEvents = PayloadsOf<typeof emailEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends EmailEvents {}
}
