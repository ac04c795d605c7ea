import { defineArea } from '../../core/area.ts';
import { voiceAgentsCatalogue } from './catalogue.ts';
import { voiceAgentRoutes } from './routes.ts';
import { voiceAgentMachine, voiceAgentTrashTypes } from './store.ts';
import { voiceAgentTools } from './tools.ts';

/** Voice agents: what answers an organization's phone numbers (docs/areas/voice-agents.md). */
export const voiceAgentsArea = defineArea({
  name: 'voice-agents',
  uses: [],
  tools: voiceAgentTools,
  routes: voiceAgentRoutes,
  tags: {
    'voice-agents':
      'Voice agents: what answers calls to a phone number (instructions, greeting, voice, language).',
  },
  brings: voiceAgentsCatalogue,
  permissions: ['voice_agents.view', 'voice_agents.create', 'voice_agents.edit', 'voice_agents.delete'],
  // The specification's event catalogue names none for voice agents.
  events: [],
  toolsets: ['telephony'],
  trashTypes: voiceAgentTrashTypes,
  stateMachines: [voiceAgentMachine],
});
