// The events the opportunities area emits, with the payload each carries: the opportunity as `get_opportunity` returns it, plus what
// the event adds. The schemas document the webhooks section of the OpenAPI document, and the
// declaration merging below makes `emit` check every payload at compile time.
import { z } from 'zod';
import { changeFields, type EventSchemas, type PayloadsOf } from '../../core/events.ts';
import { OPPORTUNITY_STATUSES, opportunitySchema } from './store.ts';

/** What a status move adds: the status before it, null for a deal created won or lost. */
const statusMove = {
  previous_status: z
    .enum(OPPORTUNITY_STATUSES)
    .nullable()
    .describe('The status before the move, or null for a deal created already won or lost'),
};

export const opportunitiesEvents = {
  'opportunity.created': opportunitySchema,
  'opportunity.updated': opportunitySchema.extend(changeFields),
  'opportunity.won': opportunitySchema.extend(statusMove),
  'opportunity.lost': opportunitySchema.extend(statusMove),
} satisfies EventSchemas;

type OpportunitiesEvents = PayloadsOf<typeof opportunitiesEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends OpportunitiesEvents {}
}
