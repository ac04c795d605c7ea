// The test kit of tools/conversation-memory (test/README.md "Test kits"): its routes live under a
// lead (/leads/:id/conversation-memory), so the leads kit's victim covers their tenancy.
import { defineKit } from '../fixtures/kit.ts';

const NOTE = { body: { note: 'n' }, text: 'note' };

export const kit = defineKit({
  area: 'conversation-memory',
  bodies: {
    update_conversation_summary: { body: { summary: 'S' }, text: 'summary' },
    add_commitment: { body: { text: 'Send deck' }, text: 'text' },
    mark_commitment_kept: NOTE,
    mark_commitment_missed: NOTE,
  },
  victims: {},
  fuzz: {
    seed: async ({ seed, pooled }) => {
      await seed(`/api/v1/leads/${pooled('leads')}/conversation-memory/commitments`, {
        text: 'Send the quote',
      });
    },
  },
});
