import { defineArea } from '../../core/area.ts';
import { leadChild } from '../leads/children.ts';
import { contactsCatalogue } from './catalogue.ts';
import { contactRoutes } from './routes.ts';
import { contactSearchSource } from './search.ts';
import { contactTrashTypes } from './store.ts';
import { contacts } from './tables.ts';
import { contactTools } from './tools.ts';

/** People at a lead, with their e-mail addresses and phone numbers. */
export const contactsArea = defineArea({
  name: 'contacts',
  tools: contactTools,
  routes: contactRoutes,
  tags: { contacts: 'People at a lead, with their e-mail addresses and phone numbers.' },
  brings: contactsCatalogue,
  permissions: ['contacts.view', 'contacts.create', 'contacts.edit', 'contacts.delete'],
  events: ['contact.created', 'contact.updated', 'contact.deleted'],
  toolsets: ['core', 'sales'],
  trashTypes: contactTrashTypes,
  leadChildren: [leadChild(contacts)],
  searchSources: [contactSearchSource],
});
