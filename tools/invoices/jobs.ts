// The overdue flag: once a day at 00:10 UTC every open invoice whose due date is before today (UTC)
// gets `is_overdue: true` and exactly one `invoice.overdue` (tools/invoices/delivery.ts).
// Idempotent: a rerun finds nothing new to flag. Declared by the area (index.ts `jobs`, `schedules`).
import { dailyJob, type OrgDailyPayload, orgDailyPayload } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { flagOverdueInvoices } from './delivery.ts';

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** Flag open invoices past their due date, one invoice.overdue each. */
    'invoices.overdue': OrgDailyPayload;
  }
}

/** Flags the invoices overdue on `now`'s UTC day; returns how many were flagged. */
export async function flagOverdue(services: Services, now = new Date(), orgId?: string): Promise<number> {
  return flagOverdueInvoices(services.db, now, orgId);
}

export const invoicesOverdue = dailyJob({
  name: 'invoices.overdue',
  payload: orgDailyPayload,
  daily: {},
  atUtc: '00:10',
  run: (services, { orgId }, now) => flagOverdue(services, now, orgId),
  log: { message: 'overdue invoices flagged', field: 'flagged' },
});
