// The test kit of tools/opportunities (test/README.md "Test kits"): its status machine is driven by PATCH.
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';
import { createAt, createLeadOver, insertLead, readAt, sendOk } from '../fixtures/kit-helpers.ts';

export const kit = defineKit({
  area: 'opportunities',
  bodies: {
    create_opportunity: { body: { lead_id: '', value: 100, note: 'n' }, text: 'note' },
    update_opportunity: { body: { note: 'n' }, text: 'note' },
    delete_opportunity: NO_BODY,
  },
  victims: {
    '/opportunities': async ({ t, org }) => {
      const leadId = await insertLead({ t }, org);
      const id = newId();
      await t.services.db.system
        .insert(opportunities)
        .values({ id, orgId: org.orgId, leadId, value: 1000, ownerId: org.ownerId });
      return {
        id,
        read: () => t.services.db.system.select().from(opportunities).where(eq(opportunities.id, id)),
      };
    },
  },
  machines: {
    opportunity: {
      moves: 'active -> won (opportunity.won), lost (opportunity.lost); won -> active; lost -> active',
      field: 'status',
      driver: (scope) => ({
        create: async () =>
          createAt(scope, '/api/v1/opportunities', 'opportunity', { lead_id: await createLeadOver(scope) }),
        move: (id, to) =>
          scope.t.request('PATCH', `/api/v1/opportunities/${id}`, {
            token: scope.org.token,
            body: { status: to },
          }),
        read: (id) => readAt(scope, `/api/v1/opportunities/${id}`, 'opportunity'),
        stateOf: (record) => String(record.status),
      }),
    },
  },
  fuzz: {
    seed: async ({ seed, pooled }) => {
      await seed('/api/v1/opportunities', { lead_id: pooled('leads'), value: 1000 });
    },
  },
  // opportunity.created, opportunity.updated, opportunity.won, opportunity.lost.
  events: async (scope) => {
    const leadId = await createLeadOver(scope);
    const won = await createAt(scope, '/api/v1/opportunities', 'opportunity', {
      lead_id: leadId,
      value: 100,
    });
    await sendOk(scope, 'PATCH', `/api/v1/opportunities/${won}`, { note: 'n' });
    await sendOk(scope, 'PATCH', `/api/v1/opportunities/${won}`, { status: 'won' });
    const lost = await createAt(scope, '/api/v1/opportunities', 'opportunity', { lead_id: leadId, value: 1 });
    await sendOk(scope, 'PATCH', `/api/v1/opportunities/${lost}`, { status: 'lost' });
  },
});
