// The test kit of tools/trash (test/README.md "Test kits"): a trashed victim lead; the trash needs no
// scope of its own (it checks each record type's family).
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { leads } from '../../tools/leads/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';
import { seedLeads } from '../leads/seed.ts';

export const kit = defineKit({
  area: 'trash',
  bodies: { restore_trash_item: NO_BODY },
  victims: {
    '/trash': async ({ t, org }) => {
      const id = newId();
      await seedLeads(t, org.orgId, [
        {
          id,
          name: 'Trashed victim lead',
          ownerId: org.ownerId,
          deletedAt: new Date(),
          deletedBy: org.ownerId,
        },
      ]);
      return { id, read: () => t.services.db.system.select().from(leads).where(eq(leads.id, id)) };
    },
  },
  unscopedTools: ['list_trash', 'restore_trash_item'],
  fuzz: {
    // A lead in the trash, so the trash routes hit a row.
    seed: async ({ t, token, seed, collect, firstId }) => {
      const doomed = firstId(await seed('/api/v1/leads', { name: 'Fuzz Lead (deleted)' }));
      await t.request('DELETE', `/api/v1/leads/${doomed}`, { token });
      collect('/api/v1/trash', await (await t.request('GET', '/api/v1/trash', { token })).json());
    },
  },
});
