// Contact routes: the collection and one contact. PUT merges exactly like PATCH (only the fields
// sent change): a PUT that wiped unsent emails or additional properties would lose data a client
// never meant to touch. Both run update_contact (OpenAPI names the PUT operation update_contact_put).

import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import { createContact, deleteContact, getContact, listContacts } from './tools.ts';

/** The contact routes; update_contact is built by the area's factory (index.ts). */
export function contactRoutes(updateContact: Tool): Route[] {
  return [
    route('GET', '/contacts', listContacts),
    route('POST', '/contacts', createContact),
    route('GET', '/contacts/:id', getContact),
    route('PATCH', '/contacts/:id', updateContact),
    route('PUT', '/contacts/:id', updateContact),
    route('DELETE', '/contacts/:id', deleteContact),
  ];
}
