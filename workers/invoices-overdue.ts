// The overdue flag: once a day (workers/runtime.ts schedules it at 00:10 UTC) every open invoice
// whose due date is before today (UTC) gets `is_overdue: true` and exactly one `invoice.overdue`
// (tools/invoices/delivery.ts). Idempotent: a rerun finds nothing new to flag.
import { z } from 'zod';
import { defineJob } from '../core/jobs.ts';
import type { Services } from '../core/services.ts';
import { flagOverdueInvoices } from '../tools/invoices/delivery.ts';

const overduePayload = z.object({
  orgId: z.string().optional().describe('Only this organization (every organization when absent)'),
});

declare module '../core/jobs.ts' {
  interface JobCatalog {
    /** Flag open invoices past their due date, one invoice.overdue each. */
    'invoices.overdue': z.output<typeof overduePayload>;
  }
}

/** Flags the invoices overdue on `now`'s UTC day; returns how many were flagged. */
export async function flagOverdue(services: Services, now = new Date(), orgId?: string): Promise<number> {
  return flagOverdueInvoices(services.db, now, orgId);
}

/** Not retried: the next day's run flags whatever this one missed. */
export const invoicesOverdueJob = defineJob({
  name: 'invoices.overdue',
  payload: overduePayload,
  attempts: 1,
  async handler({ orgId }, { services }) {
    const flagged = await flagOverdue(services, new Date(), orgId);
    services.logger.info({ flagged }, 'overdue invoices flagged');
  },
});
