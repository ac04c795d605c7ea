import {
  type AccountRemovedHook,
  defineArea,
  type EmailReceivedHook,
  type ReplyTargetHook,
} from '../../core/area.ts';
import { connectedAccountsCatalogue } from './catalogue.ts';
import { inboundEmailRoutes } from './inbound.ts';
import { connectedAccountRoutes } from './routes.ts';
import { connectedAccountTools, deleteConnectedAccountTool } from './tools.ts';

/** What the other areas declare that this one runs (tools/index.ts collects them). */
export interface ConnectedAccountsHooks {
  /** Run on every new inbound mail. */
  emailReceived: readonly EmailReceivedHook[];
  /** Asked in turn which mail of theirs an inbound mail answers. */
  replyTargets: readonly ReplyTargetHook[];
  /** Run when a user removes an account, before it goes. */
  accountRemoved: readonly AccountRemovedHook[];
}

/**
 * Connected accounts: a user's own SMTP accounts (verified for real, password encrypted) and the
 * public inbound hook that records replies. Built from the hooks the other areas declare, so it
 * imports none of them (scheduled email depends on this area, not the other way round).
 */
export function createConnectedAccountsArea(hooks: ConnectedAccountsHooks) {
  const remove = deleteConnectedAccountTool(hooks.accountRemoved);
  const tools = connectedAccountTools(remove);
  return defineArea({
    name: 'connected-accounts',
    uses: ['activities', 'contacts', 'leads'],
    tools,
    routes: connectedAccountRoutes(remove),
    tags: {
      'connected-accounts':
        "Connected accounts: the caller's own SMTP accounts mail to leads is sent through (password encrypted, never shown), a real verification of server and login, and the inbound URL replies arrive on.",
    },
    brings: connectedAccountsCatalogue,
    permissions: ['connected_accounts.view', 'connected_accounts.manage'],
    events: ['email.received'],
    toolsets: ['email'],
    publicRoutes: inboundEmailRoutes(hooks.emailReceived, hooks.replyTargets),
  });
}
