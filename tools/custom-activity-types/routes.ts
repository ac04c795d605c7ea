// Custom activity type routes: definitions only (activities of a type are logged under /activities).

import { type Route, route } from '../../core/route.ts';
import {
  createCustomActivityType,
  deleteCustomActivityType,
  getCustomActivityTypeTool,
  listCustomActivityTypes,
  replaceCustomActivityType,
  updateCustomActivityType,
} from './tools.ts';

export const customActivityTypeRoutes: Route[] = [
  route('GET', '/custom-activity-types', listCustomActivityTypes),
  route('POST', '/custom-activity-types', createCustomActivityType),
  route('GET', '/custom-activity-types/:id', getCustomActivityTypeTool),
  route('PATCH', '/custom-activity-types/:id', updateCustomActivityType),
  route('PUT', '/custom-activity-types/:id', replaceCustomActivityType),
  route('DELETE', '/custom-activity-types/:id', deleteCustomActivityType),
];
