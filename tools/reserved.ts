// What the specification names for areas not built yet: events a webhook subscription may already
// list (nothing emits them) and plan features no tool checks yet. Collected with the areas in
// tools/index.ts, so the catalogues hold every name of the specification while core/ holds none.
// When an area is built, it moves its entries from here into its own folder's declaration
// (docs/decisions.md "Event names and plan features declared by areas"): the surveys area took
// `form.submitted` and the `surveys` feature (tools/surveys/events.ts, catalogue.ts), the messages
// area `sms.sent` and `sms.received` (tools/messages/events.ts), the calls area `call_monitoring`
// (tools/calls/catalogue.ts). Nothing is reserved now; the place stays for the next name the
// specification adds before its area exists.
import type { AreaCatalogue } from '../core/catalogue.ts';
import type { EventSchemas } from '../core/events.ts';

const reservedEvents = {} satisfies EventSchemas;

export const reservedCatalogue = {
  events: reservedEvents,
  // Plan features whose areas are not built yet, with the lowest plan that has each.
  features: {},
} as const satisfies AreaCatalogue;
