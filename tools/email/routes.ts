// Scheduled email routes. REST schedules directly (a client calling the route has decided); the MCP
// tool previews without confirm, like send_invoice.
import { type Route, route } from '../../core/route.ts';
import {
  cancelScheduledEmailTool,
  getScheduledEmailTool,
  listScheduledEmailsTool,
  scheduleEmailTool,
} from './tools.ts';

export const emailRoutes: Route[] = [
  route('POST', '/email/schedule', scheduleEmailTool, {
    input: ({ body, params }) => ({ ...body, ...params, confirm: true }),
  }),
  route('GET', '/email/scheduled', listScheduledEmailsTool),
  route('GET', '/email/scheduled/:job_id', getScheduledEmailTool),
  route('DELETE', '/email/scheduled/:job_id', cancelScheduledEmailTool),
];
