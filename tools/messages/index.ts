import { defineArea } from '../../core/area.ts';
import { messagesCatalogue } from './catalogue.ts';
import { messageHookRoutes } from './hooks.ts';
import { messageRoutes } from './routes.ts';
import { messageSweep, sendMessageJob } from './send.ts';
import { messageTools } from './tools.ts';

/**
 * Messages: SMS and WhatsApp through the organization's provider account (docs/areas/messages.md):
 * sending (confirm convention, leased rows), the WhatsApp window, the provider's inbound and status
 * hooks.
 */
export const messagesArea = defineArea({
  name: 'messages',
  uses: ['telephony', 'phone-numbers', 'leads', 'contacts', 'activities'],
  tools: messageTools,
  routes: messageRoutes,
  tags: {
    messages: 'SMS and WhatsApp messages, inbound and outbound: read and list them.',
    sms: "Send an SMS to a lead from one of the organization's numbers.",
    whatsapp:
      'Send a WhatsApp message to a lead (free-form within 24 hours of their last message, else a template).',
  },
  brings: messagesCatalogue,
  permissions: ['messages.view', 'messages.send'],
  events: ['sms.sent', 'sms.received'],
  toolsets: ['telephony'],
  publicRoutes: messageHookRoutes,
  jobs: [sendMessageJob],
  sweeps: [messageSweep],
});
