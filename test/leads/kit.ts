// The test kit of tools/leads (test/README.md "Test kits"): bodies of the lead routes, a victim lead
// (the conversation-memory routes under /leads address it too), and the fuzz's lead.
import { eq } from 'drizzle-orm';
import { leads } from '../../tools/leads/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';
import { createAt, insertLead, sendOk } from '../fixtures/kit-helpers.ts';

const LEAD_BODY = { body: { name: 'Acme', industry: 'x' }, text: 'name', free: 'industry' };

export const kit = defineKit({
  area: 'leads',
  bodies: {
    create_lead: LEAD_BODY,
    bulk_upsert_leads: { body: { items: [{ name: 'Acme' }] }, text: 'note', free: 'items' },
    bulk_tag_leads: { body: { lead_ids: [], add: ['vip'] }, text: 'note', free: 'add' },
    replace_lead: LEAD_BODY,
    update_lead: LEAD_BODY,
    delete_lead: NO_BODY,
    convert_lead_to_client: NO_BODY,
  },
  victims: {
    '/leads': async ({ t, org }) => {
      const id = await insertLead({ t }, org, 'Victim lead');
      return { id, read: () => t.services.db.system.select().from(leads).where(eq(leads.id, id)) };
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      await seed('/api/v1/leads', { name: 'Fuzz Lead' });
    },
  },
  // lead.created, lead.updated, lead.status_changed, lead.deleted.
  events: async (scope) => {
    const id = await createAt(scope, '/api/v1/leads', 'lead', {
      name: 'Payload Ltd',
      tags: ['a'],
      industry: 'glass',
    });
    await sendOk(scope, 'PATCH', `/api/v1/leads/${id}`, { status: 'contacted' });
    await sendOk(scope, 'DELETE', `/api/v1/leads/${id}`);
  },
});
