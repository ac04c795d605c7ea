import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import {
  deleteOauthApp,
  deleteOauthInstallation,
  getOauthApp,
  listOauthApps,
  listOauthInstallations,
} from './tools.ts';

/** The route table; create and update are built by the area (they need the catalogue's scopes). */
export function oauthRoutes(built: { createOauthApp: Tool; updateOauthApp: Tool }): Route[] {
  return [
    route('POST', '/oauth/apps', built.createOauthApp, { status: 201 }),
    route('GET', '/oauth/apps', listOauthApps),
    route('GET', '/oauth/apps/:id', getOauthApp),
    route('PATCH', '/oauth/apps/:id', built.updateOauthApp),
    route('PUT', '/oauth/apps/:id', built.updateOauthApp),
    route('DELETE', '/oauth/apps/:id', deleteOauthApp),
    route('GET', '/oauth/installations', listOauthInstallations),
    route('DELETE', '/oauth/installations/:id', deleteOauthInstallation),
  ];
}
