// A project's time entries: who worked how long at what rate, listed and edited while the project
// is open for time and the entry is not on a billed invoice (store.ts says what billed means).
import { and, desc, eq, gte, lte, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { AppError, notFound, validationError } from '../../core/errors.ts';
import { fromMinor, toMinor } from '../../core/money.ts';
import {
  auditFields,
  auditValues,
  isAssignableUser,
  newRecordStamp,
  type RecordContext,
  sortOrder,
} from '../../core/records.ts';
import { offsetOf, type Page, paged } from '../../core/schemas.ts';
import { invoiceJoin } from '../invoices/lookups.ts';
import {
  BILLED_INVOICE_STATUSES,
  billedSql,
  projectRecords,
  rateOut,
  rateProblem,
  timeAmountMinor,
} from './store.ts';
import { type ProjectRow, type TimeEntryRow, timeEntries } from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Time entries

export const timeEntrySchema = z
  .object({
    _id: z.string().describe('Time entry id (24 hex characters)'),
    project_id: z.string().describe('Id of its project'),
    user_id: z.string().describe('Id of the user who worked'),
    date: z.string().describe('Day worked (YYYY-MM-DD)'),
    minutes: z.number().int().describe('Minutes worked, 1-1440'),
    description: z.string().describe('What was done'),
    billable: z.boolean().describe('Whether the time is billed to the client'),
    hourly_rate: z.number().nullable().describe("The entry's own hourly rate, or null for the project's"),
    effective_hourly_rate: z
      .number()
      .nullable()
      .describe("The rate it is billed at: its own, else the project's; null when neither is set"),
    amount: z
      .number()
      .nullable()
      .describe(
        'minutes × effective rate / 60 rounded half away from zero (or the amount it was invoiced at while billed); null without a rate or when not billable',
      ),
    invoice_id: z
      .string()
      .nullable()
      .describe('Id of the invoice it was last put on (a draft, a finalized or a void one), or null'),
    billed: z.boolean().describe('True while that invoice is open, paid or uncollectible'),
    ...auditFields('time entry'),
  })
  .describe('Time logged on a project');
export type TimeEntryRecord = z.output<typeof timeEntrySchema>;

export interface EntryWithInvoice {
  entry: TimeEntryRow;
  invoiceStatus: string | null;
}

export const isBilled = (status: string | null) =>
  status !== null && (BILLED_INVOICE_STATUSES as readonly string[]).includes(status);

export function effectiveRate(entry: TimeEntryRow, project: ProjectRow): bigint | null {
  return entry.hourlyRateMinor ?? project.hourlyRateMinor;
}

/** The entry's amount in minor units: as invoiced while billed, else from its effective rate. */
export function entryAmountMinor(row: EntryWithInvoice, project: ProjectRow): bigint | null {
  if (!row.entry.billable) return null;
  if (isBilled(row.invoiceStatus) && row.entry.invoicedAmountMinor !== null)
    return row.entry.invoicedAmountMinor;
  const rate = effectiveRate(row.entry, project);
  return rate === null ? null : timeAmountMinor(row.entry.minutes, rate);
}

function serializeEntry(row: EntryWithInvoice, project: ProjectRow): TimeEntryRecord {
  const { entry } = row;
  const rate = effectiveRate(entry, project);
  const amount = entryAmountMinor(row, project);
  return {
    _id: entry.id,
    project_id: entry.projectId,
    user_id: entry.userId,
    date: entry.date,
    minutes: entry.minutes,
    description: entry.description,
    billable: entry.billable,
    hourly_rate: rateOut(entry.hourlyRateMinor, project.currency),
    effective_hourly_rate: rateOut(rate, project.currency),
    amount: amount === null ? null : fromMinor(amount, project.currency),
    invoice_id: entry.invoiceId,
    billed: isBilled(row.invoiceStatus),
    ...auditValues(entry),
  };
}

function entriesQuery(db: Executor) {
  return db
    .select({ entry: timeEntries, invoiceStatus: invoiceJoin.status })
    .from(timeEntries)
    .leftJoin(invoiceJoin.table, invoiceJoin.on(timeEntries.invoiceId))
    .$dynamic();
}

async function getEntry(
  db: Executor,
  orgId: string,
  projectId: string,
  entryId: string,
  lock = false,
): Promise<EntryWithInvoice> {
  const query = entriesQuery(db)
    .where(
      and(eq(timeEntries.id, entryId), eq(timeEntries.orgId, orgId), eq(timeEntries.projectId, projectId)),
    )
    .limit(1);
  const [row] = lock ? await query.for('update', { of: timeEntries }) : await query;
  if (!row) throw notFound('Time entry');
  return row;
}

export async function readEntry(
  db: Executor,
  orgId: string,
  projectId: string,
  entryId: string,
): Promise<TimeEntryRecord> {
  const project = await projectRecords.getLive(db, orgId, projectId);
  return serializeEntry(await getEntry(db, orgId, project.id, entryId), project);
}

export interface EntryFilters {
  billable?: boolean | undefined;
  billed?: boolean | undefined;
  user_id?: string | undefined;
  date_from?: string | undefined;
  date_to?: string | undefined;
  sort?: string | undefined;
}

export const ENTRY_SORT_FIELDS = ['date', 'minutes', 'created_at'] as const;

export async function listEntries(
  db: Executor,
  orgId: string,
  projectId: string,
  filters: EntryFilters & Page,
) {
  const project = await projectRecords.getLive(db, orgId, projectId);
  const conditions: SQL[] = [eq(timeEntries.orgId, orgId), eq(timeEntries.projectId, project.id)];
  if (filters.billable !== undefined) conditions.push(eq(timeEntries.billable, filters.billable));
  if (filters.billed !== undefined) {
    conditions.push(filters.billed ? sql`${billedSql}` : sql`not ${billedSql}`);
  }
  if (filters.user_id) conditions.push(eq(timeEntries.userId, filters.user_id));
  if (filters.date_from) conditions.push(gte(timeEntries.date, filters.date_from));
  if (filters.date_to) conditions.push(lte(timeEntries.date, filters.date_to));
  const where = and(...conditions);
  const [counted] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(timeEntries)
    .leftJoin(invoiceJoin.table, invoiceJoin.on(timeEntries.invoiceId))
    .where(where);
  const order = sortOrder(
    filters.sort,
    { date: timeEntries.date, minutes: timeEntries.minutes, created_at: timeEntries.createdAt },
    timeEntries.id,
    [desc(timeEntries.date), desc(timeEntries.createdAt), desc(timeEntries.id)],
  );
  const rows = await entriesQuery(db)
    .where(where)
    .orderBy(...order)
    .limit(filters.limit)
    .offset(offsetOf(filters));
  const total = counted?.n ?? 0;
  return paged(
    'time_entries',
    rows.map((row) => serializeEntry(row, project)),
    total,
    filters,
  );
}

export interface EntryInput {
  user_id?: string | undefined;
  date?: string | undefined;
  minutes?: number | undefined;
  description?: string | undefined;
  billable?: boolean | undefined;
  hourly_rate?: number | null | undefined;
}
export type NewEntry = EntryInput & { date: string; minutes: number; description: string };

async function assertWorker(ctx: RecordContext, userId: string): Promise<void> {
  if (!(await isAssignableUser(ctx.db, ctx.auth.orgId, userId))) {
    throw validationError([
      {
        field: 'user_id',
        message: 'must be the id of an active user of this organization',
        code: 'invalid_user',
      },
    ]);
  }
}

function assertRate(rate: number | null | undefined, currency: string): void {
  if (rate === undefined || rate === null) return;
  const problem = rateProblem(rate, currency, 'hourly_rate');
  if (problem) throw validationError([problem]);
}

/** Time is not logged on an archived project (unarchive it first). */
function assertOpenForTime(project: ProjectRow): void {
  if (project.status === 'archived') {
    throw new AppError('invalid_operation', {
      message: 'The project is archived; move it back to active to log or change time',
      details: [{ field: 'status', message: 'the project is archived', code: 'project_archived' }],
    });
  }
}

export async function insertEntry(
  ctx: RecordContext,
  projectId: string,
  input: NewEntry,
): Promise<TimeEntryRecord> {
  const project = await projectRecords.getLive(ctx.db, ctx.auth.orgId, projectId, true);
  assertOpenForTime(project);
  const userId = input.user_id ?? ctx.auth.userId;
  if (userId !== ctx.auth.userId) await assertWorker(ctx, userId);
  assertRate(input.hourly_rate, project.currency);
  const [entry] = await ctx.db
    .insert(timeEntries)
    .values({
      ...newRecordStamp(ctx),
      projectId: project.id,
      userId,
      date: input.date,
      minutes: input.minutes,
      description: input.description,
      billable: input.billable ?? true,
      hourlyRateMinor:
        input.hourly_rate === undefined || input.hourly_rate === null
          ? null
          : toMinor(input.hourly_rate, project.currency),
    })
    .returning();
  if (!entry) throw new Error('insert returned no time entry');
  return serializeEntry({ entry, invoiceStatus: null }, project);
}

/** An entry on an invoice that is not void is frozen: that invoice was built from it. */
function assertEditable(row: EntryWithInvoice, what: 'changed' | 'deleted'): void {
  const status = row.invoiceStatus;
  if (status === null || status === 'void') return;
  const reason = isBilled(status)
    ? `it is billed on invoice ${row.entry.invoiceId} (${status})`
    : `it is on draft invoice ${row.entry.invoiceId}; delete that draft to release it`;
  throw new AppError('invalid_operation', {
    message: `The time entry cannot be ${what}: ${reason}`,
    details: [
      { field: 'invoice_id', message: reason, code: isBilled(status) ? 'billed' : 'on_draft_invoice' },
    ],
  });
}

export async function patchEntry(
  ctx: RecordContext,
  projectId: string,
  entryId: string,
  input: EntryInput,
): Promise<TimeEntryRecord> {
  const project = await projectRecords.getLive(ctx.db, ctx.auth.orgId, projectId, true);
  const before = await getEntry(ctx.db, ctx.auth.orgId, project.id, entryId, true);
  assertEditable(before, 'changed');
  assertOpenForTime(project);
  if (input.user_id !== undefined && input.user_id !== before.entry.userId)
    await assertWorker(ctx, input.user_id);
  assertRate(input.hourly_rate, project.currency);
  const [entry] = await ctx.db
    .update(timeEntries)
    .set({
      ...(input.user_id !== undefined ? { userId: input.user_id } : {}),
      ...(input.date !== undefined ? { date: input.date } : {}),
      ...(input.minutes !== undefined ? { minutes: input.minutes } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.billable !== undefined ? { billable: input.billable } : {}),
      ...(input.hourly_rate !== undefined
        ? {
            hourlyRateMinor: input.hourly_rate === null ? null : toMinor(input.hourly_rate, project.currency),
          }
        : {}),
      updatedAt: ctx.now,
    })
    .where(and(eq(timeEntries.id, before.entry.id), eq(timeEntries.orgId, ctx.auth.orgId)))
    .returning();
  if (!entry) throw notFound('Time entry');
  return serializeEntry({ entry, invoiceStatus: before.invoiceStatus }, project);
}

export async function deleteEntry(ctx: RecordContext, projectId: string, entryId: string): Promise<void> {
  const project = await projectRecords.getLive(ctx.db, ctx.auth.orgId, projectId, true);
  const before = await getEntry(ctx.db, ctx.auth.orgId, project.id, entryId, true);
  assertEditable(before, 'deleted');
  await ctx.db
    .delete(timeEntries)
    .where(and(eq(timeEntries.id, before.entry.id), eq(timeEntries.orgId, ctx.auth.orgId)));
}
