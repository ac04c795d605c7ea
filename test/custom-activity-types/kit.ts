// The test kit of tools/custom-activity-types (test/README.md "Test kits").
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { customActivityTypes } from '../../tools/custom-activity-types/tables.ts';
import { defineKit, NAME_BODY, NO_BODY } from '../fixtures/kit.ts';

export const kit = defineKit({
  area: 'custom-activity-types',
  bodies: {
    create_custom_activity_type: NAME_BODY,
    update_custom_activity_type: NAME_BODY,
    replace_custom_activity_type: NAME_BODY,
    delete_custom_activity_type: NO_BODY,
  },
  victims: {
    '/custom-activity-types': async ({ t, org }) => {
      const id = newId();
      await t.services.db.system.insert(customActivityTypes).values({
        id,
        orgId: org.orgId,
        name: `Victim type ${id}`,
        fields: [{ key: 'outcome', label: 'Outcome', type: 'text', required: false }],
      });
      return {
        id,
        read: () =>
          t.services.db.system.select().from(customActivityTypes).where(eq(customActivityTypes.id, id)),
      };
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      await seed('/api/v1/custom-activity-types', { name: 'Fuzz Type' });
    },
  },
});
