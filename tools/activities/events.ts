// The events the activities area emits, with the payload each carries: the activity as `get_activity` returns it (a completed call is a call activity), plus what
// the event adds. The schemas document the webhooks section of the OpenAPI document, and the
// declaration merging below makes `emit` check every payload at compile time.
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';
import { activitySchema } from './store.ts';

export const activitiesEvents = {
  'activity.created': activitySchema,
  'call.completed': activitySchema,
} satisfies EventSchemas;

type ActivitiesEvents = PayloadsOf<typeof activitiesEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends ActivitiesEvents {}
}
