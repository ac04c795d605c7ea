// Message routes: the two sends (201 with the message; a `"confirm": false` preview is 200) under the
// per-user messaging limit (30 a minute, stacked on the per-IP limit), one message and the list.
import { type Route, route } from '../../core/route.ts';
import { getMessage, listMessages, sendSms, sendWhatsapp } from './tools.ts';

export const messageRoutes: Route[] = [
  route('POST', '/sms', sendSms, { status: 201, limits: ['messaging'] }),
  route('POST', '/whatsapp', sendWhatsapp, { status: 201, limits: ['messaging'] }),
  route('GET', '/messages', listMessages),
  route('GET', '/messages/:id', getMessage),
];
