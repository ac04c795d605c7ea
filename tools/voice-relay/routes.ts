// Voice session routes: read only (the relay writes sessions).
import { type Route, route } from '../../core/route.ts';
import { getVoiceSession, listVoiceSessions } from './tools.ts';

export const voiceRelayRoutes: Route[] = [
  route('GET', '/voice-sessions', listVoiceSessions),
  route('GET', '/voice-sessions/:id', getVoiceSession),
];
