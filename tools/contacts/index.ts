import { type ContactMovingHook, defineArea } from '../../core/area.ts';
import { leadChild } from '../leads/children.ts';
import { contactsCatalogue } from './catalogue.ts';
import { contactResource } from './resources.ts';
import { contactRoutes } from './routes.ts';
import { contactSearchSource } from './search.ts';
import { contactTrashTypes } from './store.ts';
import { contacts } from './tables.ts';
import { contactTools, updateContactTool } from './tools.ts';

/**
 * People at a lead, with their e-mail addresses and phone numbers. Built with the contact-moving
 * hooks of the areas whose records name a contact of its lead (tools/index.ts collects them), so
 * this area never reads their tables.
 */
export function createContactsArea(moving: readonly ContactMovingHook[]) {
  const updateContact = updateContactTool(moving);
  return defineArea({
    name: 'contacts',
    uses: ['leads'],
    tools: contactTools(updateContact),
    routes: contactRoutes(updateContact),
    tags: { contacts: 'People at a lead, with their e-mail addresses and phone numbers.' },
    brings: contactsCatalogue,
    permissions: ['contacts.view', 'contacts.create', 'contacts.edit', 'contacts.delete'],
    events: ['contact.created', 'contact.updated', 'contact.deleted'],
    toolsets: ['core', 'sales'],
    trashTypes: contactTrashTypes,
    leadChildren: [leadChild(contacts)],
    searchSources: [contactSearchSource],
    resources: [contactResource],
  });
}
