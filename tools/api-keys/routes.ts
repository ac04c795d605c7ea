import { type Route, route } from '../../core/route.ts';
import { createApiKey, listApiKeys, revokeApiKey, rotateApiKey, updateApiKey } from './tools.ts';

export const apiKeyRoutes: Route[] = [
  route('POST', '/settings/api-keys', createApiKey),
  route('GET', '/settings/api-keys', listApiKeys),
  route('PATCH', '/settings/api-keys/:id', updateApiKey),
  route('PUT', '/settings/api-keys/:id', updateApiKey),
  route('DELETE', '/settings/api-keys/:id', revokeApiKey),
  route('POST', '/settings/api-keys/:id/rotate', rotateApiKey, { status: 201 }),
];
