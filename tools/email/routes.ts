// Scheduled email routes. Scheduling follows the `confirm` convention of core/confirm.ts.
import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import { cancelScheduledEmailTool, getScheduledEmailTool, listScheduledEmailsTool } from './tools.ts';

/** The routes, with schedule_email as the area built it (tools/email/tools.ts scheduleEmailTool). */
export function emailRoutes(scheduleEmail: Tool): Route[] {
  return [
    route('POST', '/email/schedule', scheduleEmail),
    route('GET', '/email/scheduled', listScheduledEmailsTool),
    route('GET', '/email/scheduled/:job_id', getScheduledEmailTool),
    route('DELETE', '/email/scheduled/:job_id', cancelScheduledEmailTool),
  ];
}
