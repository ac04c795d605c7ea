import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import { listApiKeys, revokeApiKey, updateApiKey } from './tools.ts';

/** The route table; create and rotate are built by the area (they need the known scopes). */
export function apiKeyRoutes(createApiKey: Tool, rotateApiKey: Tool): Route[] {
  return [
    route('POST', '/settings/api-keys', createApiKey),
    route('GET', '/settings/api-keys', listApiKeys),
    route('PATCH', '/settings/api-keys/:id', updateApiKey),
    route('PUT', '/settings/api-keys/:id', updateApiKey),
    route('DELETE', '/settings/api-keys/:id', revokeApiKey),
    route('POST', '/settings/api-keys/:id/rotate', rotateApiKey, { status: 201 }),
  ];
}
