import { defineArea } from '../../core/area.ts';
import { phoneNumbersCatalogue } from './catalogue.ts';
import { phoneNumberRoutes } from './routes.ts';
import { phoneNumberOwnership, phoneNumberTrashTypes } from './store.ts';
import { phoneNumberTools } from './tools.ts';

/** Phone numbers of the organization and the voice agent that answers each (docs/areas/phone-numbers.md). */
export const phoneNumbersArea = defineArea({
  name: 'phone-numbers',
  uses: ['voice-agents'],
  tools: phoneNumberTools,
  routes: phoneNumberRoutes,
  tags: {
    'phone-numbers':
      "Phone numbers: the organization's numbers (E.164), what each carries, the voice agent that answers it and where calls go otherwise.",
  },
  brings: phoneNumbersCatalogue,
  permissions: ['phone_numbers.view', 'phone_numbers.create', 'phone_numbers.edit', 'phone_numbers.delete'],
  // The specification's event catalogue names none for phone numbers.
  events: [],
  toolsets: ['telephony'],
  trashTypes: phoneNumberTrashTypes,
  ownedRecords: phoneNumberOwnership,
});
