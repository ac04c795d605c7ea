import { DEFAULT_SCOPES } from '../../core/access.ts';
import { defineArea } from '../../core/area.ts';
import type { Catalogue } from '../../core/catalogue.ts';
import { authorizeRoutes, type OauthCatalogue } from './authorize.ts';
import { oauthCatalogue } from './catalogue.ts';
import { discoveryRoutes } from './discovery.ts';
import { oauthCleanup } from './jobs.ts';
import { registerRoutes } from './register.ts';
import { oauthRoutes } from './routes.ts';
import { tokenRoutes } from './token.ts';
import {
  createOauthAppTool,
  deleteOauthApp,
  deleteOauthInstallation,
  getOauthApp,
  listOauthApps,
  listOauthInstallations,
  updateOauthAppTool,
} from './tools.ts';

/**
 * OAuth 2.1 for installed apps and MCP clients: the organization's registered apps and its people's
 * installations (tools), and the authorization server as public routes (discovery, the authorize
 * page, token, revocation, dynamic registration). Built from the catalogue (the scopes a client
 * may ask for, the toolsets a consent may pin), which tools/index.ts builds first with this area's
 * declaration in its place.
 */
export function createOauthArea(catalogue: Pick<Catalogue, 'knownScopes' | 'scopeLabels' | 'toolsets'>) {
  const known: OauthCatalogue = {
    knownScopes: catalogue.knownScopes,
    scopeLabels: catalogue.scopeLabels,
    defaultScopes: DEFAULT_SCOPES,
    toolsets: catalogue.toolsets,
  };
  const createOauthApp = createOauthAppTool(catalogue.knownScopes);
  const updateOauthApp = updateOauthAppTool(catalogue.knownScopes);
  return defineArea({
    name: 'oauth',
    tools: [
      createOauthApp,
      listOauthApps,
      getOauthApp,
      updateOauthApp,
      deleteOauthApp,
      listOauthInstallations,
      deleteOauthInstallation,
    ],
    routes: oauthRoutes({ createOauthApp, updateOauthApp }),
    tags: {
      oauth:
        "OAuth apps of the organization and the installations (grants) of its people; the authorization server's own endpoints live outside /api/v1 (/oauth/*, /.well-known/*).",
    },
    brings: oauthCatalogue,
    permissions: ['oauth.apps.manage', 'oauth.installations.view_own'],
    events: [],
    toolsets: ['admin', 'settings'],
    publicRoutes: [
      ...discoveryRoutes(known),
      ...authorizeRoutes(known),
      ...tokenRoutes,
      ...registerRoutes(known),
    ],
    jobs: [oauthCleanup.job],
    schedules: [oauthCleanup.schedule],
  });
}
