// The test kit of tools/users (test/README.md "Test kits"): a victim member, read back with their keys.
import { eq } from 'drizzle-orm';
import { apiKeys, users } from '../../core/db/schema.ts';
import { defineKit, NAME_BODY, NO_BODY } from '../fixtures/kit.ts';

export const kit = defineKit({
  area: 'users',
  bodies: {
    create_user: {
      body: { email: 'dee@example.test', name: 'Dee', role: 'member', password: 'Correct-Horse-Battery-9' },
      text: 'password',
    },
    update_user: NAME_BODY,
    delete_user: { body: { acknowledge_data_deletion: true }, text: 'note' },
    deactivate_user: NO_BODY,
    reactivate_user: NO_BODY,
  },
  victims: {
    '/users': async ({ t, org }) => {
      const { userId } = await t.createUser(org.orgId, 'member');
      return {
        id: userId,
        read: async () => ({
          user: await t.services.db.system.select().from(users).where(eq(users.id, userId)),
          keys: await t.services.db.system.select().from(apiKeys).where(eq(apiKeys.userId, userId)),
        }),
      };
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      await seed('/api/v1/users', {
        name: 'Fuzz Member',
        email: 'fuzz-member@example.test',
        role: 'member',
        password: 'correct horse battery',
      });
    },
  },
});
