// Connected-account routes: the caller's own accounts (PUT merges exactly like PATCH), verify,
// rotating the inbound secret, and the mails an account received. The public inbound hook is not
// here: it is a public route of the area (inbound.ts).
import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import {
  createConnectedAccount,
  getConnectedAccount,
  listConnectedAccounts,
  listInboundEmails,
  rotateInboundSecretTool,
  updateConnectedAccount,
  verifyConnectedAccount,
} from './tools.ts';

/** The routes, with the area's delete tool (built from the accountRemoved hooks). */
export const connectedAccountRoutes = (deleteConnectedAccount: Tool): Route[] => [
  route('GET', '/connected-accounts', listConnectedAccounts),
  route('POST', '/connected-accounts', createConnectedAccount),
  route('GET', '/connected-accounts/:id', getConnectedAccount),
  route('PATCH', '/connected-accounts/:id', updateConnectedAccount),
  route('PUT', '/connected-accounts/:id', updateConnectedAccount),
  route('DELETE', '/connected-accounts/:id', deleteConnectedAccount),
  route('POST', '/connected-accounts/:id/verify', verifyConnectedAccount),
  route('POST', '/connected-accounts/:id/rotate-inbound-secret', rotateInboundSecretTool),
  route('GET', '/connected-accounts/:id/inbound-emails', listInboundEmails),
];
