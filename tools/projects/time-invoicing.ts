// Invoicing a project's time: the unbilled billable entries become one draft invoice (through the
// invoices area's own insertInvoice), and the invoicing report sums billed and unbilled time.
import { and, asc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { users } from '../../core/db/schema.ts';
import { validationError } from '../../core/errors.ts';
import type { LineItemInput } from '../../core/line-items.ts';
import { formatMinor, fromMinor } from '../../core/money.ts';
import type { RecordContext } from '../../core/records.ts';
import { invoiceJoin } from '../invoices/lookups.ts';
import { type InvoiceRecord, insertInvoice } from '../invoices/store.ts';
import { projectInvoiceHooks } from './invoice-hooks.ts';
import { minutesShape, projectRecords, timeAmountMinor } from './store.ts';
import { type ProjectRow, timeEntries } from './tables.ts';
import { type EntryWithInvoice, effectiveRate, entryAmountMinor, isBilled } from './time-entries.ts';

// ---------------------------------------------------------------------------------------------
// Invoicing

/** "2h 05m" */
function hoursText(minutes: number): string {
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h === 0 ? `${m} min` : `${h}h ${String(m).padStart(2, '0')}m`;
}

/**
 * One invoice line for an entry, whose amount is exactly minutes × rate / 60 rounded half away
 * from zero. When the hours are exact in 4 decimals (minutes divisible by 3: 0.05 h steps, every
 * quarter hour) the line is `quantity = hours, unit_price = rate`; otherwise `quantity = 1,
 * unit_price = that rounded amount`, the hours and rate then in the description. Either way the
 * line's amount is the same figure.
 */
function timeLine(
  entry: { date: string; minutes: number; description: string },
  userName: string,
  rateMinor: bigint,
  currency: string,
): LineItemInput {
  const rate = formatMinor(rateMinor, currency);
  const head = `${entry.date} · ${userName} · `;
  const tail = ` (${hoursText(entry.minutes)} at ${rate} ${currency}/h)`;
  const room = 1000 - head.length - tail.length;
  const text =
    entry.description.length > room ? `${entry.description.slice(0, room - 1)}…` : entry.description;
  const description = `${head}${text}${tail}`;
  if (entry.minutes % 3 === 0) {
    // minutes / 60 = (minutes × 500 / 3) / 10000: an exact decimal of at most 4 places.
    const units = (entry.minutes * 500) / 3;
    const quantity = Number(`${Math.floor(units / 10000)}.${String(units % 10000).padStart(4, '0')}`);
    return { description, quantity, unit_price: fromMinor(rateMinor, currency) };
  }
  return {
    description,
    quantity: 1,
    unit_price: fromMinor(timeAmountMinor(entry.minutes, rateMinor), currency),
  };
}

/**
 * A draft invoice of the project's unbilled billable entries that no live draft holds (never
 * invoiced, or on a void invoice), one line per entry in date order. The project row lock keeps two
 * concurrent calls from invoicing the same time.
 */
export async function invoiceProject(ctx: RecordContext, projectId: string): Promise<InvoiceRecord> {
  const project = await projectRecords.getLive(ctx.db, ctx.auth.orgId, projectId, true);
  if (project.leadId === null) {
    throw validationError([
      { field: 'lead_id', message: 'the project needs a client lead to be invoiced', code: 'missing_lead' },
    ]);
  }
  const rows = await ctx.db
    .select({ entry: timeEntries, userName: users.name })
    .from(timeEntries)
    .leftJoin(invoiceJoin.table, invoiceJoin.on(timeEntries.invoiceId))
    .leftJoin(users, eq(users.id, timeEntries.userId))
    .where(
      and(
        eq(timeEntries.orgId, ctx.auth.orgId),
        eq(timeEntries.projectId, project.id),
        eq(timeEntries.billable, true),
        sql`(${timeEntries.invoiceId} is null or ${invoiceJoin.status} = 'void')`,
      ),
    )
    .orderBy(asc(timeEntries.date), asc(timeEntries.createdAt), asc(timeEntries.id))
    .for('update', { of: timeEntries });
  if (rows.length === 0) {
    throw validationError([
      {
        field: 'time_entries',
        message: 'the project has no unbilled billable time that is not already on a draft invoice',
        code: 'nothing_to_invoice',
      },
    ]);
  }
  const unrated = rows.filter((r) => effectiveRate(r.entry, project) === null).map((r) => r.entry.id);
  if (unrated.length > 0) {
    throw validationError([
      {
        field: 'hourly_rate',
        message: `the project has no hourly_rate and these time entries have none either: ${unrated.join(', ')}`,
        code: 'missing_rate',
      },
    ]);
  }
  const priced = rows.map(({ entry, userName }) => {
    const rate = effectiveRate(entry, project) ?? 0n;
    return {
      entry,
      amount: timeAmountMinor(entry.minutes, rate),
      line: timeLine(entry, userName ?? 'Former user', rate, project.currency),
    };
  });
  const invoice = await insertInvoice(
    ctx,
    {
      lead_id: project.leadId,
      project_id: project.id,
      currency: project.currency,
      line_items: priced.map((p) => p.line),
    },
    [projectInvoiceHooks],
  );
  for (const { entry, amount } of priced) {
    await ctx.db
      .update(timeEntries)
      .set({ invoiceId: invoice._id, invoicedAmountMinor: amount, updatedAt: ctx.now })
      .where(and(eq(timeEntries.id, entry.id), eq(timeEntries.orgId, ctx.auth.orgId)));
  }
  return invoice;
}

// ---------------------------------------------------------------------------------------------
// Invoicing report

interface Bucket {
  billable: number;
  billed: number;
  nonBillable: number;
  billedMinor: bigint;
  unbilledMinor: bigint;
}

const emptyBucket = (): Bucket => ({
  billable: 0,
  billed: 0,
  nonBillable: 0,
  billedMinor: 0n,
  unbilledMinor: 0n,
});

function addTo(bucket: Bucket, row: EntryWithInvoice, project: ProjectRow): void {
  const { entry } = row;
  if (!entry.billable) {
    bucket.nonBillable += entry.minutes;
    return;
  }
  bucket.billable += entry.minutes;
  const amount = entryAmountMinor(row, project) ?? 0n;
  if (isBilled(row.invoiceStatus)) {
    bucket.billed += entry.minutes;
    bucket.billedMinor += amount;
  } else {
    bucket.unbilledMinor += amount;
  }
}

function bucketOut(bucket: Bucket, currency: string) {
  return {
    billable_minutes: bucket.billable,
    billed_minutes: bucket.billed,
    unbilled_minutes: bucket.billable - bucket.billed,
    non_billable_minutes: bucket.nonBillable,
    billed_amount: fromMinor(bucket.billedMinor, currency),
    unbilled_amount: fromMinor(bucket.unbilledMinor, currency),
  };
}

const bucketShape = {
  ...minutesShape,
  billed_amount: z
    .number()
    .describe('Sum of the billed entries’ invoiced line amounts (exact, in the currency’s major unit)'),
  unbilled_amount: z
    .number()
    .describe(
      'Sum over the unbilled billable entries of minutes × effective rate / 60, each rounded half away from zero; entries without a rate count 0',
    ),
};

export const invoicingReportSchema = z
  .object({
    project_id: z.string().describe('The project'),
    currency: z.string().describe('ISO 4217 currency of every amount'),
    ...bucketShape,
    by_user: z
      .array(
        z
          .object({
            user_id: z.string().describe('The user who worked'),
            name: z.string().nullable().describe("The user's name, or null when the user is gone"),
            ...bucketShape,
          })
          .describe('One user’s time'),
      )
      .describe('Per user who logged time, by name'),
    by_month: z
      .array(
        z
          .object({ month: z.string().describe('YYYY-MM of the entries’ dates'), ...bucketShape })
          .describe('One month’s time'),
      )
      .describe('Per month with time, oldest first'),
  })
  .describe("A project's billed and unbilled time and money");
export type InvoicingReport = z.output<typeof invoicingReportSchema>;

export async function invoicingReport(
  db: Executor,
  orgId: string,
  projectId: string,
): Promise<InvoicingReport> {
  const project = await projectRecords.getLive(db, orgId, projectId);
  const rows = await db
    .select({ entry: timeEntries, invoiceStatus: invoiceJoin.status, userName: users.name })
    .from(timeEntries)
    .leftJoin(invoiceJoin.table, invoiceJoin.on(timeEntries.invoiceId))
    .leftJoin(users, eq(users.id, timeEntries.userId))
    .where(and(eq(timeEntries.orgId, orgId), eq(timeEntries.projectId, project.id)));
  const total = emptyBucket();
  const byUser = new Map<string, { name: string | null; bucket: Bucket }>();
  const byMonth = new Map<string, Bucket>();
  for (const row of rows) {
    addTo(total, row, project);
    const user = byUser.get(row.entry.userId) ?? { name: row.userName, bucket: emptyBucket() };
    byUser.set(row.entry.userId, user);
    addTo(user.bucket, row, project);
    const month = row.entry.date.slice(0, 7);
    const bucket = byMonth.get(month) ?? emptyBucket();
    byMonth.set(month, bucket);
    addTo(bucket, row, project);
  }
  const currency = project.currency;
  return {
    project_id: project.id,
    currency,
    ...bucketOut(total, currency),
    by_user: [...byUser.entries()]
      .sort(([ida, a], [idb, b]) => (a.name ?? '').localeCompare(b.name ?? '') || ida.localeCompare(idb))
      .map(([userId, { name, bucket }]) => ({ user_id: userId, name, ...bucketOut(bucket, currency) })),
    by_month: [...byMonth.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([month, bucket]) => ({ month, ...bucketOut(bucket, currency) })),
  };
}
