// The test kit of tools/smart-views (test/README.md "Test kits").
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { smartViews } from '../../tools/smart-views/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';

const VIEW = { body: { name: 'View', query: { logic: 'and', filters: [] } }, text: 'name', free: 'query' };

export const kit = defineKit({
  area: 'smart-views',
  bodies: {
    create_smart_view: VIEW,
    // PUT and PATCH both: a whole view is a valid patch too.
    update_smart_view: VIEW,
    delete_smart_view: NO_BODY,
  },
  victims: {
    '/smart-views': async ({ t, org }) => {
      const id = newId();
      await t.services.db.system.insert(smartViews).values({
        id,
        orgId: org.orgId,
        name: 'Victim view',
        query: { logic: 'and', filters: [] },
        visibility: 'shared',
        ownerId: org.ownerId,
      });
      return { id, read: () => t.services.db.system.select().from(smartViews).where(eq(smartViews.id, id)) };
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      for (const n of [1, 2, 3])
        await seed('/api/v1/smart-views', { name: `Fuzz View ${n}`, query: { logic: 'and', filters: [] } });
    },
  },
});
