// The events the leads area emits, with the payload each carries: the lead as `get_lead` returns it,
// plus what the event adds. The schemas document the webhooks section of the OpenAPI document, and
// the declaration merging below makes `emit` check every payload at compile time.
import { z } from 'zod';
import { changeFields, deletedFields, type EventSchemas, type PayloadsOf } from '../../core/events.ts';
import { leadSchema } from './store.ts';

export const leadsEvents = {
  'lead.created': leadSchema,
  'lead.updated': leadSchema.extend(changeFields),
  'lead.deleted': leadSchema.extend(deletedFields),
  'lead.status_changed': leadSchema.extend({
    previous_status: z.string().describe('The status before the change'),
  }),
} satisfies EventSchemas;

type LeadsEvents = PayloadsOf<typeof leadsEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends LeadsEvents {}
}
