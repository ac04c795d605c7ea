// What the specification names for areas not built yet: events a webhook subscription may already
// list (nothing emits them) and plan features no tool checks yet. Collected with the areas in
// tools/index.ts, so the catalogues hold every name of the specification while core/ holds none.
// When an area is built (telephony), it moves its entries from here into its own folder's
// declaration (docs/decisions.md "Event names and plan features declared by areas"): the surveys
// area took `form.submitted` and the `surveys` feature (tools/surveys/events.ts, catalogue.ts), the
// messages area `sms.sent` and `sms.received` (tools/messages/events.ts). No event is reserved now.
import type { AreaCatalogue } from '../core/catalogue.ts';
import type { EventSchemas, PayloadsOf } from '../core/events.ts';

const reservedEvents = {} satisfies EventSchemas;

export const reservedCatalogue = {
  events: reservedEvents,
  // Plan features whose areas are not built yet, with the lowest plan that has each.
  features: { call_monitoring: 'enterprise' },
} as const satisfies AreaCatalogue;

type ReservedEvents = PayloadsOf<typeof reservedEvents>;

type ReservedFeatures = (typeof reservedCatalogue)['features'];

declare module '../core/access.ts' {
  interface FeatureCatalog extends ReservedFeatures {}
}

declare module '../core/events.ts' {
  interface EventCatalog extends ReservedEvents {}
}
