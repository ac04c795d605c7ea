import { defineArea } from '../../core/area.ts';
import { callsCatalogue } from './catalogue.ts';
import { callHookRoutes } from './hooks.ts';
import { callRoutes } from './routes.ts';
import { callTools } from './tools.ts';

/**
 * Calls: incoming calls from the provider's voice hook (answered by a voice agent, forwarded to the
 * number's owner through a conference, or declined), their statuses, and the call activity each
 * becomes (docs/areas/calls.md).
 */
export const callsArea = defineArea({
  name: 'calls',
  uses: ['telephony', 'phone-numbers', 'voice-agents', 'voice-relay', 'activities', 'contacts', 'leads'],
  tools: callTools,
  routes: callRoutes,
  tags: {
    calls: 'Phone calls: incoming calls recorded from the provider, with their statuses.',
    'call-monitor': 'Call monitoring: a supervisor listens to, whispers in or joins a live forwarded call.',
  },
  brings: callsCatalogue,
  permissions: ['calls.view', 'calls.monitor'],
  // A call's end is `call.completed`, emitted by the activities area with the call activity.
  events: [],
  toolsets: ['telephony'],
  publicRoutes: callHookRoutes,
});
