// The test kit of tools/api-keys (test/README.md "Test kits"): routes live under /settings/api-keys.
import { eq } from 'drizzle-orm';
import { apiKeys } from '../../core/db/schema.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';

const LABEL = { body: { label: 'Key' }, text: 'label' };

export const kit = defineKit({
  area: 'api-keys',
  bodies: {
    create_api_key: { body: { label: 'Key', scopes: ['read:leads'] }, text: 'label', free: 'scopes' },
    update_api_key: LABEL,
    revoke_api_key: NO_BODY,
    rotate_api_key: NO_BODY,
  },
  victims: {
    '/settings/api-keys': async ({ t, org }) => {
      const { keyId } = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
      return {
        id: keyId,
        read: () => t.services.db.system.select().from(apiKeys).where(eq(apiKeys.id, keyId)),
      };
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      await seed('/api/v1/settings/api-keys', { label: 'Fuzz key', scopes: ['read:leads'] });
    },
    pools: { 'settings/api-keys': 'api-keys' },
  },
});
