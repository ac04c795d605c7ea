// The test kit of tools/voice-agents (test/README.md "Test kits"): the active <-> paused machine is driven by PATCH status.
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { voiceAgents } from '../../tools/voice-agents/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';
import { createAt, readAt } from '../fixtures/kit-helpers.ts';

/** The least a valid create_voice_agent body needs. */
export const AGENT_BODY = {
  name: 'Front desk',
  instructions: 'Answer questions about opening hours and take a message.',
  greeting: 'Hello, you have reached Acme. How can I help?',
  voice: 'Polly.Joanna',
  language: 'en-US',
};

export const kit = defineKit({
  area: 'voice-agents',
  bodies: {
    create_voice_agent: { body: AGENT_BODY, text: 'instructions' },
    update_voice_agent: { body: { greeting: 'Hi there' }, text: 'greeting' },
    delete_voice_agent: NO_BODY,
  },
  victims: {
    '/voice-agents': async ({ t, org }) => {
      const id = newId();
      await t.services.db.system.insert(voiceAgents).values({
        id,
        orgId: org.orgId,
        name: 'Victim voice agent',
        instructions: 'Private instructions',
        greeting: 'Private greeting',
        voice: 'Polly.Joanna',
        language: 'en',
      });
      return {
        id,
        read: () => t.services.db.system.select().from(voiceAgents).where(eq(voiceAgents.id, id)),
      };
    },
  },
  machines: {
    'voice agent': {
      moves: 'active -> paused; paused -> active',
      field: 'status',
      driver: (scope) => ({
        create: () => createAt(scope, '/api/v1/voice-agents', 'voice_agent', AGENT_BODY),
        move: (id, to) =>
          scope.t.request('PATCH', `/api/v1/voice-agents/${id}`, {
            token: scope.org.token,
            body: { status: to },
          }),
        read: (id) => readAt(scope, `/api/v1/voice-agents/${id}`, 'voice_agent'),
        stateOf: (record) => String(record.status),
      }),
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      for (const n of [1, 2, 3])
        await seed('/api/v1/voice-agents', { ...AGENT_BODY, name: `Fuzz voice agent ${n}` });
    },
  },
});
