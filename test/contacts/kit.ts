// The test kit of tools/contacts (test/README.md "Test kits").
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { contacts } from '../../tools/contacts/tables.ts';
import { defineKit, NAME_BODY, NO_BODY } from '../fixtures/kit.ts';
import { createAt, createLeadOver, insertLead, sendOk } from '../fixtures/kit-helpers.ts';

export const kit = defineKit({
  area: 'contacts',
  bodies: {
    create_contact: { body: { lead_id: '', name: 'Cy', role_note: 'x' }, text: 'name', free: 'role_note' },
    update_contact: NAME_BODY,
    delete_contact: NO_BODY,
  },
  victims: {
    '/contacts': async ({ t, org }) => {
      const leadId = await insertLead({ t }, org);
      const id = newId();
      await t.services.db.system
        .insert(contacts)
        .values({ id, orgId: org.orgId, leadId, name: 'Victim contact' });
      return { id, read: () => t.services.db.system.select().from(contacts).where(eq(contacts.id, id)) };
    },
  },
  fuzz: {
    seed: async ({ seed, pooled }) => {
      await seed('/api/v1/contacts', {
        lead_id: pooled('leads'),
        name: 'Fuzz Contact',
        email: 'fuzz-contact@example.test',
      });
    },
  },
  // contact.created, contact.updated, contact.deleted.
  events: async (scope) => {
    const leadId = await createLeadOver(scope);
    const id = await createAt(scope, '/api/v1/contacts', 'contact', { lead_id: leadId, name: 'Cy' });
    await sendOk(scope, 'PATCH', `/api/v1/contacts/${id}`, { name: 'Cy Two' });
    await sendOk(scope, 'DELETE', `/api/v1/contacts/${id}`);
  },
});
