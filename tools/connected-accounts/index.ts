import { type Area, defineArea, type EmailReceivedHook } from '../../core/area.ts';
import { connectedAccountsCatalogue } from './catalogue.ts';
import { inboundEmailRoutes } from './inbound.ts';
import { connectedAccountRoutes } from './routes.ts';
import { connectedAccountTools } from './tools.ts';

/**
 * Connected accounts: a user's own SMTP accounts (verified for real, password encrypted) and the
 * public inbound hook that records replies. Built from the emailReceived hooks the other areas
 * declare (tools/index.ts collects them), which run on every new inbound mail.
 */
export function createConnectedAccountsArea(hooks: readonly EmailReceivedHook[]): Area {
  return defineArea({
    name: 'connected-accounts',
    uses: ['activities', 'contacts', 'leads'],
    tools: connectedAccountTools,
    routes: connectedAccountRoutes,
    tags: {
      'connected-accounts':
        "Connected accounts: the caller's own SMTP accounts mail to leads is sent through (password encrypted, never shown), a real verification of server and login, and the inbound URL replies arrive on.",
    },
    brings: connectedAccountsCatalogue,
    permissions: ['connected_accounts.view', 'connected_accounts.manage'],
    events: ['email.received'],
    toolsets: ['email'],
    publicRoutes: inboundEmailRoutes(hooks),
  });
}
