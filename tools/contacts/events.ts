// The events the contacts area emits, with the payload each carries: the contact as `get_contact` returns it, plus what
// the event adds. The schemas document the webhooks section of the OpenAPI document, and the
// declaration merging below makes `emit` check every payload at compile time.
import { changeFields, deletedFields, type EventSchemas, type PayloadsOf } from '../../core/events.ts';
import { contactSchema } from './store.ts';

export const contactsEvents = {
  'contact.created': contactSchema,
  'contact.updated': contactSchema.extend(changeFields),
  'contact.deleted': contactSchema.extend(deletedFields),
} satisfies EventSchemas;

type ContactsEvents = PayloadsOf<typeof contactsEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends ContactsEvents {}
}
