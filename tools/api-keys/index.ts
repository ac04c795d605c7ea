import { defineArea } from '../../core/area.ts';
import { apiKeysCatalogue } from './catalogue.ts';
import { apiKeyRoutes } from './routes.ts';
import { apiKeyTools } from './tools.ts';

/** The calling user's personal access tokens. */
export const apiKeysArea = defineArea({
  name: 'api-keys',
  tools: apiKeyTools,
  routes: apiKeyRoutes,
  tags: { 'api-keys': "The calling user's personal access tokens (API keys)." },
  brings: apiKeysCatalogue,
  permissions: ['settings.api_keys.create', 'settings.api_keys.view_own', 'settings.api_keys.delete'],
  events: [],
  toolsets: ['settings'],
});
