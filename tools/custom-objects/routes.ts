// Custom object routes: the definitions under /custom-objects and each definition's records under
// /custom-objects/{objectId}/records. PUT and PATCH both merge (the specification's PUT changes only
// the keys sent), for definitions and records alike; OpenAPI names the second route `<tool>_put`.

import { type Route, route } from '../../core/route.ts';
import {
  createCustomObject,
  deleteCustomObject,
  getCustomObject,
  listCustomObjects,
  updateCustomObject,
} from './definitions.ts';
import {
  createCustomObjectRecord,
  deleteCustomObjectRecord,
  getCustomObjectRecord,
  listCustomObjectRecords,
  updateCustomObjectRecord,
} from './records.ts';

export const customObjectRoutes: Route[] = [
  route('GET', '/custom-objects', listCustomObjects),
  route('POST', '/custom-objects', createCustomObject),
  route('GET', '/custom-objects/:id', getCustomObject),
  route('PATCH', '/custom-objects/:id', updateCustomObject),
  route('PUT', '/custom-objects/:id', updateCustomObject),
  route('DELETE', '/custom-objects/:id', deleteCustomObject),
  route('GET', '/custom-objects/:objectId/records', listCustomObjectRecords),
  route('POST', '/custom-objects/:objectId/records', createCustomObjectRecord),
  route('GET', '/custom-objects/:objectId/records/:recordId', getCustomObjectRecord),
  route('PUT', '/custom-objects/:objectId/records/:recordId', updateCustomObjectRecord),
  route('PATCH', '/custom-objects/:objectId/records/:recordId', updateCustomObjectRecord),
  route('DELETE', '/custom-objects/:objectId/records/:recordId', deleteCustomObjectRecord),
];
