// Scheduled email routes. Scheduling follows the `confirm` convention of core/confirm.ts.
import { type Route, route } from '../../core/route.ts';
import {
  cancelScheduledEmailTool,
  getScheduledEmailTool,
  listScheduledEmailsTool,
  scheduleEmailTool,
} from './tools.ts';

export const emailRoutes: Route[] = [
  route('POST', '/email/schedule', scheduleEmailTool),
  route('GET', '/email/scheduled', listScheduledEmailsTool),
  route('GET', '/email/scheduled/:job_id', getScheduledEmailTool),
  route('DELETE', '/email/scheduled/:job_id', cancelScheduledEmailTool),
];
