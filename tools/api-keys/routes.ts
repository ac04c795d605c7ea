import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import { listApiKeys, revokeApiKey } from './tools.ts';

/** The route table; create, update and rotate are built by the area (they need the catalogue). */
export function apiKeyRoutes(built: { createApiKey: Tool; updateApiKey: Tool; rotateApiKey: Tool }): Route[] {
  return [
    route('POST', '/settings/api-keys', built.createApiKey),
    route('GET', '/settings/api-keys', listApiKeys),
    route('PATCH', '/settings/api-keys/:id', built.updateApiKey),
    route('PUT', '/settings/api-keys/:id', built.updateApiKey),
    route('DELETE', '/settings/api-keys/:id', revokeApiKey),
    route('POST', '/settings/api-keys/:id/rotate', built.rotateApiKey, { status: 201 }),
  ];
}
