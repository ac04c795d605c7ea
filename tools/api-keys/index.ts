import { defineArea } from '../../core/area.ts';
import { apiKeysCatalogue } from './catalogue.ts';
import { apiKeyRoutes } from './routes.ts';
import {
  createApiKeyTool,
  type KeyCatalogue,
  listApiKeys,
  revokeApiKey,
  rotateApiKeyTool,
  updateApiKeyTool,
} from './tools.ts';

/**
 * The calling user's personal access tokens. Built from the catalogue (the toolsets a key may
 * select, the scopes that grant something), which tools/index.ts builds first with this area's
 * declaration in its place.
 */
export function createApiKeysArea(catalogue: KeyCatalogue) {
  const createApiKey = createApiKeyTool(catalogue);
  const updateApiKey = updateApiKeyTool(catalogue);
  const rotateApiKey = rotateApiKeyTool(catalogue);
  return defineArea({
    name: 'api-keys',
    tools: [createApiKey, listApiKeys, updateApiKey, revokeApiKey, rotateApiKey],
    routes: apiKeyRoutes({ createApiKey, updateApiKey, rotateApiKey }),
    tags: { 'api-keys': "The calling user's personal access tokens (API keys)." },
    brings: apiKeysCatalogue,
    permissions: ['settings.api_keys.create', 'settings.api_keys.view_own', 'settings.api_keys.delete'],
    events: [],
    toolsets: ['settings'],
  });
}
