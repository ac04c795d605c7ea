// The test kit of tools/voice-relay (test/README.md "Test kits"): sessions are written by the relay
// only, so the victim is a row inserted directly.
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { voiceSessions } from '../../tools/voice-relay/tables.ts';
import { defineKit } from '../fixtures/kit.ts';

export const kit = defineKit({
  area: 'voice-relay',
  bodies: {},
  victims: {
    '/voice-sessions': async ({ t, org }) => {
      const id = newId();
      await t.services.db.system.insert(voiceSessions).values({
        id,
        orgId: org.orgId,
        callSid: `CA${id}`,
        sessionId: `VX${id}`,
        startedAt: new Date(),
        transcript: [{ kind: 'caller', text: 'Private words', at: new Date().toISOString() }],
      });
      return {
        id,
        read: () => t.services.db.system.select().from(voiceSessions).where(eq(voiceSessions.id, id)),
      };
    },
  },
});
