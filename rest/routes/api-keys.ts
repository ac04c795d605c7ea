import { createApiKey, listApiKeys, revokeApiKey, rotateApiKey } from '../../tools/api-keys.ts';
import { type Route, route } from '../route.ts';

export const apiKeyRoutes: Route[] = [
  route('POST', '/settings/api-keys', createApiKey),
  route('GET', '/settings/api-keys', listApiKeys),
  route('DELETE', '/settings/api-keys/:id', revokeApiKey),
  route('POST', '/settings/api-keys/:id/rotate', rotateApiKey, { status: 201 }),
];
