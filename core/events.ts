// The event catalogue's types and the transactional outbox. An event row is inserted in the
// same transaction as the change that causes it: a rolled-back change leaves no event, a committed
// one is never lost (the relay of the webhooks work moves rows on to deliveries).

import { z } from 'zod';
import type { Executor } from './db/client.ts';
import { compileRowInsert } from './db/compiled-rows.ts';
import { outboxEvents } from './db/schema.ts';
import { newId } from './ids.ts';

/**
 * Every event and its payload, by name. Empty here on purpose: the area that emits an event declares
 * its zod payload schema (`tools/<area>/events.ts`, handed to `defineArea` as `brings.events`) and adds
 * its inferred type here by declaration merging, so event names and `emit`'s data are checked at
 * compile time while the kernel knows no area. The events the specification names for areas not
 * built yet are declared the same way by tools/reserved.ts (docs/decisions.md "Event payloads
 * declared by areas", "Event names and plan features declared by areas").
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in each area's events.ts
export interface EventCatalog {}
export type EventName = keyof EventCatalog & string;

/** What `emit(event, data)` takes as data: the payload its declaration gives. */
export type EventPayload<E extends EventName> = EventCatalog[E];

/** Writes an event to the outbox in the caller's transaction; the data is checked against the event's payload. */
export type Emit = <E extends EventName>(event: E, data: EventPayload<E>) => Promise<void>;

/** What an area declares: the zod payload schema of each event it emits and owns, by name. */
export type EventSchemas = Readonly<Record<string, z.ZodType<Record<string, unknown>>>>;

/** The payload types of declared schemas: what an area's events.ts adds to `EventCatalog`. */
export type PayloadsOf<S extends EventSchemas> = { -readonly [K in keyof S]-?: z.output<NonNullable<S[K]>> };

/** What an `<x>.updated` payload adds to the record (core/records.ts `changePayload`). */
export const changeFields = {
  changed_fields: z.array(z.string()).describe('The fields this change set'),
  previous_values: z
    .record(z.string(), z.unknown())
    .describe('The value each changed field had before the change'),
};

/** What a `<x>.deleted` payload adds to the record. */
export const deletedFields = {
  deleted_at: z.string().describe('When the record was moved to the trash (ISO 8601)'),
};

/** Every change writes one: compiled once (core/db/compiled-rows.ts). */
const insertOutboxEvent = compileRowInsert(outboxEvents);

export async function recordEvent<E extends EventName>(
  tx: Executor,
  orgId: string,
  event: E,
  data: EventPayload<E>,
): Promise<string> {
  const id = newId();
  await insertOutboxEvent(tx, { id, orgId, event, data });
  return id;
}
