import { defineArea } from '../../core/area.ts';
import { voiceRelayCatalogue } from './catalogue.ts';
import { relayRoute } from './relay.ts';
import { voiceRelayRoutes } from './routes.ts';
import { voiceRelayTools } from './tools.ts';

/** The voice relay: voice agents answering calls over ConversationRelay (docs/areas/voice-relay.md). */
export const voiceRelayArea = defineArea({
  name: 'voice-relay',
  uses: ['voice-agents', 'telephony', 'knowledge-base'],
  tools: voiceRelayTools,
  routes: voiceRelayRoutes,
  tags: {
    'voice-sessions': 'Voice sessions: the calls voice agents answered, with their transcripts.',
  },
  brings: voiceRelayCatalogue,
  permissions: ['voice_sessions.view'],
  // The specification's event catalogue names none for voice sessions.
  events: [],
  toolsets: ['telephony'],
  socketRoutes: [relayRoute],
});
