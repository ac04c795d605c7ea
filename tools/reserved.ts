// What the specification names for areas not built yet: events a webhook subscription may already
// list (nothing emits them) and plan features no tool checks yet. Collected with the areas in
// tools/index.ts, so the catalogues hold every name of the specification while core/ holds none.
// When an area is built (telephony), it moves its entries from here into its own folder's
// declaration (docs/decisions.md "Event names and plan features declared by areas"): the surveys
// area took `form.submitted` and the `surveys` feature (tools/surveys/events.ts, catalogue.ts), the
// calls area `call_monitoring` (tools/calls/catalogue.ts).
import { z } from 'zod';
import type { AreaCatalogue } from '../core/catalogue.ts';
import type { PayloadsOf } from '../core/events.ts';

/** The payload of an event no area emits yet: not specified, any object. */
const unspecifiedPayload = z
  .record(z.string(), z.unknown())
  .describe('The record or change that triggered the event (not specified yet: no area emits it).');

const reservedEvents = {
  'sms.received': unspecifiedPayload,
  'sms.sent': unspecifiedPayload,
};

export const reservedCatalogue = {
  events: reservedEvents,
} as const satisfies AreaCatalogue;

type ReservedEvents = PayloadsOf<typeof reservedEvents>;

declare module '../core/events.ts' {
  interface EventCatalog extends ReservedEvents {}
}
