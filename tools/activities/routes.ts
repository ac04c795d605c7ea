// Activity routes: the collection, one activity, and a lead's timeline.
// PUT merges exactly like PATCH (only the fields sent change), as on every record resource.

import { type Route, route } from '../../core/route.ts';
import {
  deleteActivity,
  getActivity,
  listActivities,
  listLeadActivities,
  logActivity,
  updateActivity,
} from './tools.ts';

export const activityRoutes: Route[] = [
  route('GET', '/activities', listActivities),
  // log_activity is a creation although its name does not start with create_.
  route('POST', '/activities', logActivity, { status: 201 }),
  route('GET', '/activities/:id', getActivity),
  route('PATCH', '/activities/:id', updateActivity),
  route('PUT', '/activities/:id', updateActivity),
  route('DELETE', '/activities/:id', deleteActivity),
  route('GET', '/leads/:id/activities', listLeadActivities),
];
