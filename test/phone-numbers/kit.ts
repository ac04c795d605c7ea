// The test kit of tools/phone-numbers (test/README.md "Test kits"): victims are live numbers of another organization.
import { randomInt } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { phoneNumbers } from '../../tools/phone-numbers/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';

/** A fresh E.164 number: live numbers are unique across the whole service, so tests never share one. */
export function freshNumber(): string {
  return `+1555${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
}

export const kit = defineKit({
  area: 'phone-numbers',
  bodies: {
    create_phone_number: { body: { number: '+14155550100', label: 'Sales line' }, text: 'label' },
    update_phone_number: { body: { label: 'Support line' }, text: 'label' },
    set_phone_number_default_voice_agent: {
      body: { default_voice_agent_id: null },
      text: 'default_voice_agent_id',
    },
    delete_phone_number: NO_BODY,
  },
  victims: {
    '/phone-numbers': async ({ t, org }) => {
      const id = newId();
      await t.services.db.system
        .insert(phoneNumbers)
        .values({ id, orgId: org.orgId, number: freshNumber(), ownerId: org.ownerId });
      return {
        id,
        read: () => t.services.db.system.select().from(phoneNumbers).where(eq(phoneNumbers.id, id)),
      };
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      for (const n of [1, 2, 3])
        await seed('/api/v1/phone-numbers', { number: freshNumber(), label: `Fuzz line ${n}` });
    },
  },
});
