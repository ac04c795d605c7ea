// Phone number routes: the collection, one number, and its default voice agent. PUT merges exactly
// like PATCH, as on every record resource.
import { type Route, route } from '../../core/route.ts';
import {
  createPhoneNumber,
  deletePhoneNumber,
  getPhoneNumber,
  listPhoneNumbers,
  setDefaultVoiceAgent,
  updatePhoneNumber,
} from './tools.ts';

export const phoneNumberRoutes: Route[] = [
  route('GET', '/phone-numbers', listPhoneNumbers),
  route('POST', '/phone-numbers', createPhoneNumber),
  route('GET', '/phone-numbers/:id', getPhoneNumber),
  route('PATCH', '/phone-numbers/:id', updatePhoneNumber),
  route('PUT', '/phone-numbers/:id', updatePhoneNumber),
  route('DELETE', '/phone-numbers/:id', deletePhoneNumber),
  route('PATCH', '/phone-numbers/:id/default-voice-agent', setDefaultVoiceAgent),
  // The PUT twin every PATCH has (test/route-consistency.test.ts); the body is the same one field.
  route('PUT', '/phone-numbers/:id/default-voice-agent', setDefaultVoiceAgent),
];
