// Voice agent routes: the collection and one voice agent. PUT merges exactly like PATCH, as on every record resource.
import { type Route, route } from '../../core/route.ts';
import {
  createVoiceAgent,
  deleteVoiceAgent,
  getVoiceAgent,
  listVoiceAgents,
  updateVoiceAgent,
} from './tools.ts';

export const voiceAgentRoutes: Route[] = [
  route('GET', '/voice-agents', listVoiceAgents),
  route('POST', '/voice-agents', createVoiceAgent),
  route('GET', '/voice-agents/:id', getVoiceAgent),
  route('PATCH', '/voice-agents/:id', updateVoiceAgent),
  route('PUT', '/voice-agents/:id', updateVoiceAgent),
  route('DELETE', '/voice-agents/:id', deleteVoiceAgent),
];
