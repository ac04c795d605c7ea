import { defineArea } from '../../core/area.ts';
import { telephonyCatalogue } from './catalogue.ts';
import { telephonyRoutes } from './routes.ts';
import { telephonyTools } from './tools.ts';

/**
 * Telephony: the organization's provider account (Twilio) that turns telephony on, and what other
 * areas ask of it (lookups.ts: credentials, the tenant of a hook's Account SID; signature.ts: the
 * hooks' signature check).
 */
export const telephonyArea = defineArea({
  name: 'telephony',
  uses: [],
  tools: telephonyTools,
  routes: telephonyRoutes,
  tags: { telephony: "The organization's telephony provider account (Twilio): connect, read, remove." },
  brings: telephonyCatalogue,
  permissions: ['settings.telephony.view', 'settings.telephony.manage'],
  events: [],
  toolsets: ['settings'],
});
