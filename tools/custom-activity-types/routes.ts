// Custom activity type routes: definitions only (activities of a type are logged under /activities).

import { type Route, route } from '../../core/route.ts';
import {
  createCustomActivityType,
  getCustomActivityTypeTool,
  listCustomActivityTypes,
  type TypeChangeTools,
} from './tools.ts';

/** The routes; the tools that change a type are built by the area's factory (index.ts). */
export function customActivityTypeRoutes(changes: TypeChangeTools): Route[] {
  return [
    route('GET', '/custom-activity-types', listCustomActivityTypes),
    route('POST', '/custom-activity-types', createCustomActivityType),
    route('GET', '/custom-activity-types/:id', getCustomActivityTypeTool),
    route('PATCH', '/custom-activity-types/:id', changes.update),
    route('PUT', '/custom-activity-types/:id', changes.replace),
    route('DELETE', '/custom-activity-types/:id', changes.remove),
  ];
}
