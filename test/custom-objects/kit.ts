// The test kit of tools/custom-objects (test/README.md "Test kits"): a victim definition with one
// record; routes address the definition (`:id`, `:objectId`) or the record.
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { customObjectRecords, customObjects } from '../../tools/custom-objects/tables.ts';
import { defineKit, NAME_BODY, NO_BODY } from '../fixtures/kit.ts';

const VALUES = { body: { values: {} }, text: 'note', free: 'values' };

export const kit = defineKit({
  area: 'custom-objects',
  bodies: {
    create_custom_object: {
      body: { name: 'Thing', fields: [{ key: 'title', label: 'Title', type: 'text' }] },
      text: 'name',
      free: 'fields',
    },
    update_custom_object: NAME_BODY,
    delete_custom_object: NO_BODY,
    create_custom_object_record: { body: { values: { title: 'x' } }, text: 'note', free: 'values' },
    update_custom_object_record: VALUES,
    delete_custom_object_record: NO_BODY,
  },
  victims: {
    '/custom-objects': async ({ t, org }) => {
      const objectId = newId();
      const recordId = newId();
      await t.services.db.system.insert(customObjects).values({
        id: objectId,
        orgId: org.orgId,
        name: `Victim object ${objectId}`,
        fields: [{ key: 'title', label: 'Title', type: 'text', required: false }],
      });
      await t.services.db.system.insert(customObjectRecords).values({
        id: recordId,
        orgId: org.orgId,
        objectId,
        values: { title: 'Victim record' },
        ownerId: org.ownerId,
      });
      return {
        id: objectId,
        params: { objectId, recordId },
        read: async () => ({
          object: await t.services.db.system
            .select()
            .from(customObjects)
            .where(eq(customObjects.id, objectId)),
          records: await t.services.db.system
            .select()
            .from(customObjectRecords)
            .where(eq(customObjectRecords.objectId, objectId)),
        }),
      };
    },
  },
  fuzz: {
    seed: async ({ seed, firstId }) => {
      const object = firstId(
        await seed('/api/v1/custom-objects', {
          name: 'Fuzz Object',
          fields: [{ key: 'title', label: 'Title', type: 'text' }],
        }),
      );
      await seed(`/api/v1/custom-objects/${object}/records`, { values: { title: 'Fuzz record' } });
    },
  },
});
