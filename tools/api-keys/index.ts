import { type Area, defineArea } from '../../core/area.ts';
import { apiKeysCatalogue } from './catalogue.ts';
import { apiKeyRoutes } from './routes.ts';
import { createApiKeyTool, listApiKeys, revokeApiKey, rotateApiKeyTool, updateApiKey } from './tools.ts';

/**
 * The calling user's personal access tokens. `knownScopes` gives, at call time, every scope that
 * grants something: the catalogue is built from the area list this area is part of.
 */
export function createApiKeysArea(knownScopes: () => readonly string[]): Area {
  const createApiKey = createApiKeyTool(knownScopes);
  const rotateApiKey = rotateApiKeyTool(knownScopes);
  return defineArea({
    name: 'api-keys',
    tools: [createApiKey, listApiKeys, updateApiKey, revokeApiKey, rotateApiKey],
    routes: apiKeyRoutes(createApiKey, rotateApiKey),
    tags: { 'api-keys': "The calling user's personal access tokens (API keys)." },
    brings: apiKeysCatalogue,
    permissions: ['settings.api_keys.create', 'settings.api_keys.view_own', 'settings.api_keys.delete'],
    events: [],
    toolsets: ['settings'],
  });
}
