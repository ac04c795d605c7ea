// Contacts as MCP resources (crm://contacts/{id}), read through get_contact and listed through list_contacts.
import { defineRecordResource, textField } from '../../core/resources.ts';
import { getContact, listContacts } from './tools.ts';

export const contactResource = defineRecordResource({
  collection: 'contacts',
  title: 'Contact',
  description:
    'A contact (a person at a lead) as get_contact answers it: name, title, e-mail addresses, phone numbers.',
  get: getContact,
  list: listContacts,
  items: 'contacts',
  recentSort: '-updated_at',
  label: (contact) => {
    const name = textField(contact, 'name') ?? 'Contact';
    const title = textField(contact, 'title');
    return title ? `${name} (${title})` : name;
  },
});
