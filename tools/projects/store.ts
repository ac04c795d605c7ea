// Projects' data functions: projects (status machine, money in minor units), their time entries,
// invoicing the unbilled billable time into a draft invoice (through the invoices area's own
// insertInvoice) and the invoicing report. An entry's billing state is derived, never stored: it
// is billed while the invoice it is on (invoice_id) is open, paid or uncollectible; on a draft it
// is still unbilled (but taken), a void invoice gives it back, a deleted draft releases it.
import { and, asc, desc, eq, gte, inArray, lte, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { users } from '../../core/db/schema.ts';
import { AppError, type ErrorDetail, notFound, validationError } from '../../core/errors.ts';
import type { LineItemInput } from '../../core/line-items.ts';
import {
  decimalPlaces,
  divideRounded,
  formatMinor,
  fromMinor,
  MAX_MINOR,
  minorDigits,
  toMinor,
} from '../../core/money.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  isAssignableUser,
  mergePatch,
  newRecordStamp,
  type RecordContext,
  sortOrder,
} from '../../core/records.ts';
import { offsetOf, type Page, paged } from '../../core/schemas.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import { type InvoiceRecord, insertInvoice } from '../invoices/store.ts';
import { invoices } from '../invoices/tables.ts';
import { leadRecords } from '../leads/store.ts';
import { type ProjectRow, projects, type TimeEntryRow, timeEntries } from './tables.ts';

export const PROJECT_STATUSES = ['active', 'on_hold', 'completed', 'archived'] as const;
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];

/**
 * active <-> on_hold; either -> completed; completed -> active (reopened); any -> archived;
 * archived -> active only (unarchive). No project events exist in the catalogue, so moves emit none.
 */
export const projectStatusMachine = defineStateMachine({
  resource: 'project',
  field: 'status',
  states: PROJECT_STATUSES,
  initial: 'active',
  moves: {
    active: { on_hold: null, completed: null, archived: null },
    on_hold: { active: null, completed: null, archived: null },
    completed: { active: null, archived: null },
    archived: { active: null },
  },
});

export function toProjectStatus(value: string): ProjectStatus {
  return projectStatusMachine.parse(value);
}

/** Invoice statuses under which the time on them counts as billed. */
export const BILLED_INVOICE_STATUSES = ['open', 'paid', 'uncollectible'] as const;

// ---------------------------------------------------------------------------------------------
// Money of time

/** minutes × hourly rate / 60, rounded half away from zero to the currency's minor unit. */
export function timeAmountMinor(minutes: number, rateMinor: bigint): bigint {
  return divideRounded(BigInt(minutes) * rateMinor, 60n);
}

/** An hourly rate sent as a number: at most the currency's decimals (400 naming `field` otherwise). */
export function rateProblem(rate: number, currency: string, field: string): ErrorDetail | null {
  const digits = minorDigits(currency);
  if (decimalPlaces(rate) > digits) {
    return {
      field,
      message: `must have at most ${digits} decimals in ${currency}`,
      code: 'too_many_decimals',
    };
  }
  if (toMinor(rate, currency) > MAX_MINOR) {
    return { field, message: 'is too large', code: 'too_big' };
  }
  return null;
}

const rateOut = (minor: bigint | null, currency: string) =>
  minor === null ? null : fromMinor(minor, currency);

// ---------------------------------------------------------------------------------------------
// Minutes of projects

export interface MinuteTotals {
  billable_minutes: number;
  billed_minutes: number;
  unbilled_minutes: number;
  non_billable_minutes: number;
}

const ZERO_MINUTES: MinuteTotals = {
  billable_minutes: 0,
  billed_minutes: 0,
  unbilled_minutes: 0,
  non_billable_minutes: 0,
};

/** `billed` as SQL over time_entries left-joined to its invoice. */
const billedSql = sql<boolean>`coalesce(${invoices.status} in ('open', 'paid', 'uncollectible'), false)`;

/** Each project's minutes by billing state (billable = billed + unbilled). */
async function minutesOf(
  db: Executor,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, MinuteTotals>> {
  const totals = new Map<string, MinuteTotals>();
  if (ids.length === 0) return totals;
  const rows = await db
    .select({
      projectId: timeEntries.projectId,
      billable: sql<string>`coalesce(sum(${timeEntries.minutes}) filter (where ${timeEntries.billable}), 0)`,
      billed: sql<string>`coalesce(sum(${timeEntries.minutes}) filter (where ${timeEntries.billable} and ${billedSql}), 0)`,
      nonBillable: sql<string>`coalesce(sum(${timeEntries.minutes}) filter (where not ${timeEntries.billable}), 0)`,
    })
    .from(timeEntries)
    .leftJoin(invoices, eq(invoices.id, timeEntries.invoiceId))
    .where(and(eq(timeEntries.orgId, orgId), inArray(timeEntries.projectId, [...ids])))
    .groupBy(timeEntries.projectId);
  for (const row of rows) {
    const billable = Number(row.billable);
    const billed = Number(row.billed);
    totals.set(row.projectId, {
      billable_minutes: billable,
      billed_minutes: billed,
      unbilled_minutes: billable - billed,
      non_billable_minutes: Number(row.nonBillable),
    });
  }
  return totals;
}

// ---------------------------------------------------------------------------------------------
// Project shape

const minutesShape = {
  billable_minutes: z.number().int().describe('Billable minutes logged, billed and unbilled'),
  billed_minutes: z
    .number()
    .int()
    .describe('Billable minutes on a finalized invoice (open, paid or uncollectible)'),
  unbilled_minutes: z
    .number()
    .int()
    .describe('Billable minutes not billed yet (including those on a draft or a void invoice)'),
  non_billable_minutes: z.number().int().describe('Minutes logged as not billable'),
};

export const projectSchema = z
  .object({
    _id: z.string().describe('Project id (24 hex characters)'),
    name: z.string().describe('Project name'),
    lead_id: z.string().nullable().describe('Id of the client lead, or null'),
    status: projectStatusMachine.schema.describe('active, on_hold, completed or archived'),
    currency: z.string().describe('ISO 4217 currency of its rates and invoices'),
    hourly_rate: z
      .number()
      .nullable()
      .describe("Default hourly rate of its time entries (currency's major unit), or null"),
    budget_hours: z.number().nullable().describe('Hours budgeted, or null'),
    starts_on: z.string().nullable().describe('Start date (YYYY-MM-DD), or null'),
    due_on: z.string().nullable().describe('Due date (YYYY-MM-DD), or null'),
    description: z.string().nullable().describe('Free-text description, or null'),
    ...minutesShape,
    ...auditFields('project'),
  })
  .describe('A project of billable work, usually for a client lead');
export type ProjectRecord = z.output<typeof projectSchema>;

export function serializeProject(row: ProjectRow, minutes: MinuteTotals = ZERO_MINUTES): ProjectRecord {
  return {
    _id: row.id,
    name: row.name,
    lead_id: row.leadId,
    status: toProjectStatus(row.status),
    currency: row.currency,
    hourly_rate: rateOut(row.hourlyRateMinor, row.currency),
    budget_hours: row.budgetHours === null ? null : Number(row.budgetHours),
    starts_on: row.startsOn,
    due_on: row.dueOn,
    description: row.description,
    ...minutes,
    ...auditValues(row),
  };
}

export async function serializeProjects(
  db: Executor,
  orgId: string,
  rows: readonly ProjectRow[],
): Promise<ProjectRecord[]> {
  const minutes = await minutesOf(
    db,
    orgId,
    rows.map((r) => r.id),
  );
  return rows.map((row) => serializeProject(row, minutes.get(row.id)));
}

export async function projectRecord(db: Executor, orgId: string, row: ProjectRow): Promise<ProjectRecord> {
  const [record] = await serializeProjects(db, orgId, [row]);
  if (!record) throw new Error('serializeProjects returned nothing');
  return record;
}

/** The projects table on the record helper: live lookups (404 "Project not found") and the list. */
export const projectRecords = defineRecordTable<ProjectRow>({
  label: 'Project',
  table: projects,
  select: (db) => db.select().from(projects).$dynamic(),
  update: (db, set, where) => db.update(projects).set(set).where(where).returning(),
});

// ---------------------------------------------------------------------------------------------
// Project writes

export interface ProjectInput {
  name?: string | undefined;
  lead_id?: string | null | undefined;
  status?: ProjectStatus | undefined;
  currency?: string | undefined;
  hourly_rate?: number | null | undefined;
  budget_hours?: number | null | undefined;
  starts_on?: string | null | undefined;
  due_on?: string | null | undefined;
  description?: string | null | undefined;
}
export type NewProject = ProjectInput & { name: string; currency: string };

interface ProjectState {
  name: string;
  leadId: string | null;
  status: ProjectStatus;
  currency: string;
  hourlyRate: number | null;
  budgetHours: number | null;
  startsOn: string | null;
  dueOn: string | null;
  description: string | null;
}

function stateOf(row: ProjectRow): ProjectState {
  return {
    name: row.name,
    leadId: row.leadId,
    status: toProjectStatus(row.status),
    currency: row.currency,
    hourlyRate: rateOut(row.hourlyRateMinor, row.currency),
    budgetHours: row.budgetHours === null ? null : Number(row.budgetHours),
    startsOn: row.startsOn,
    dueOn: row.dueOn,
    description: row.description,
  };
}

function patchOf(input: ProjectInput) {
  return {
    name: input.name,
    leadId: input.lead_id,
    status: input.status,
    currency: input.currency,
    hourlyRate: input.hourly_rate,
    budgetHours: input.budget_hours,
    startsOn: input.starts_on,
    dueOn: input.due_on,
    description: input.description,
  };
}

/** The checks that need more than one field or the database; returns the columns to write. */
async function checkProject(ctx: RecordContext, state: ProjectState, leadChanged: boolean) {
  const details: ErrorDetail[] = [];
  if (state.startsOn !== null && state.dueOn !== null && state.dueOn < state.startsOn) {
    details.push({ field: 'due_on', message: 'must not be before starts_on', code: 'invalid_date' });
  }
  if (state.hourlyRate !== null) {
    const problem = rateProblem(state.hourlyRate, state.currency, 'hourly_rate');
    if (problem) details.push(problem);
  }
  if (details.length > 0) throw validationError(details);
  // An unknown, trashed or other-organization lead is a 404 "Lead not found", as for every child record.
  if (leadChanged && state.leadId !== null) await leadRecords.getLive(ctx.db, ctx.auth.orgId, state.leadId);
  return {
    name: state.name,
    leadId: state.leadId,
    status: state.status,
    currency: state.currency,
    hourlyRateMinor: state.hourlyRate === null ? null : toMinor(state.hourlyRate, state.currency),
    budgetHours: state.budgetHours === null ? null : String(state.budgetHours),
    startsOn: state.startsOn,
    dueOn: state.dueOn,
    description: state.description,
  };
}

export async function insertProject(
  ctx: RecordContext,
  input: NewProject,
  extra: { id?: string } = {},
): Promise<ProjectRow> {
  const state = mergePatch<ProjectState>(
    {
      name: input.name,
      leadId: null,
      status: 'active',
      currency: input.currency,
      hourlyRate: null,
      budgetHours: null,
      startsOn: null,
      dueOn: null,
      description: null,
    },
    patchOf(input),
  );
  projectStatusMachine.assertMove(projectStatusMachine.initial, state.status);
  const columns = await checkProject(ctx, state, true);
  const [row] = await ctx.db
    .insert(projects)
    .values({ ...newRecordStamp(ctx), ...(extra.id ? { id: extra.id } : {}), ...columns })
    .returning();
  if (!row) throw new Error('insert returned no project');
  return row;
}

export async function patchProject(ctx: RecordContext, id: string, input: ProjectInput): Promise<ProjectRow> {
  const before = await projectRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const previous = stateOf(before);
  const next = mergePatch<ProjectState>(previous, patchOf(input));
  projectStatusMachine.assertMove(previous.status, next.status);
  if (next.currency !== previous.currency && (await entryCount(ctx.db, before.id)) > 0) {
    throw validationError([
      {
        field: 'currency',
        message: 'cannot change once time is logged on the project (its rates and invoices are in it)',
        code: 'currency_locked',
      },
    ]);
  }
  if (next.leadId !== previous.leadId && (await invoicedCount(ctx.db, before.id)) > 0) {
    throw validationError([
      {
        field: 'lead_id',
        message:
          'cannot change while the project has invoices that are not void (they bill this client); void them or delete the drafts first',
        code: 'lead_locked',
      },
    ]);
  }
  const columns = await checkProject(ctx, next, next.leadId !== previous.leadId);
  return projectRecords.write(ctx.db, ctx.auth.orgId, before.id, { ...columns, updatedAt: ctx.now });
}

/**
 * The project's invoices that still bill its client: every live invoice naming the project (a
 * draft of its time or one made by hand) that is not void. While there is one the project keeps
 * its lead, so an invoice and its project never name two clients (docs/billing.md "Projects and
 * time").
 */
async function invoicedCount(db: Executor, projectId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(invoices)
    .where(
      and(
        eq(invoices.projectId, projectId),
        sql`${invoices.status} <> 'void'`,
        sql`${invoices.deletedAt} is null`,
      ),
    );
  return row?.n ?? 0;
}

async function entryCount(db: Executor, projectId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(timeEntries)
    .where(eq(timeEntries.projectId, projectId));
  return row?.n ?? 0;
}

/**
 * Deletes a project for good with its time entries. Refused (400 naming `time_entries`) while any
 * entry is on an invoice that is not void (a draft or a finalized one): the invoice was built from it.
 */
export async function deleteProject(ctx: RecordContext, id: string): Promise<void> {
  const before = await projectRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const [taken] = await ctx.db
    .select({ n: sql<number>`count(*)::int` })
    .from(timeEntries)
    .innerJoin(invoices, eq(invoices.id, timeEntries.invoiceId))
    .where(and(eq(timeEntries.projectId, before.id), sql`${invoices.status} <> 'void'`));
  if ((taken?.n ?? 0) > 0) {
    throw new AppError('invalid_operation', {
      message: 'The project has time on invoices; delete the draft or void the invoice first',
      details: [
        {
          field: 'time_entries',
          message: `${taken?.n} time entries are on an invoice that is not void`,
          code: 'invoiced_time',
        },
      ],
    });
  }
  await ctx.db.delete(projects).where(and(eq(projects.id, before.id), eq(projects.orgId, ctx.auth.orgId)));
}

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

interface EntryWithInvoice {
  entry: TimeEntryRow;
  invoiceStatus: string | null;
}

const isBilled = (status: string | null) =>
  status !== null && (BILLED_INVOICE_STATUSES as readonly string[]).includes(status);

function effectiveRate(entry: TimeEntryRow, project: ProjectRow): bigint | null {
  return entry.hourlyRateMinor ?? project.hourlyRateMinor;
}

/** The entry's amount in minor units: as invoiced while billed, else from its effective rate. */
function entryAmountMinor(row: EntryWithInvoice, project: ProjectRow): bigint | null {
  if (!row.entry.billable) return null;
  if (isBilled(row.invoiceStatus) && row.entry.invoicedAmountMinor !== null)
    return row.entry.invoicedAmountMinor;
  const rate = effectiveRate(row.entry, project);
  return rate === null ? null : timeAmountMinor(row.entry.minutes, rate);
}

export function serializeEntry(row: EntryWithInvoice, project: ProjectRow): TimeEntryRecord {
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
    .select({ entry: timeEntries, invoiceStatus: invoices.status })
    .from(timeEntries)
    .leftJoin(invoices, eq(invoices.id, timeEntries.invoiceId))
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
    .leftJoin(invoices, eq(invoices.id, timeEntries.invoiceId))
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
export function timeLine(
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
    .leftJoin(invoices, eq(invoices.id, timeEntries.invoiceId))
    .leftJoin(users, eq(users.id, timeEntries.userId))
    .where(
      and(
        eq(timeEntries.orgId, ctx.auth.orgId),
        eq(timeEntries.projectId, project.id),
        eq(timeEntries.billable, true),
        sql`(${timeEntries.invoiceId} is null or ${invoices.status} = 'void')`,
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
  const invoice = await insertInvoice(ctx, {
    lead_id: project.leadId,
    project_id: project.id,
    currency: project.currency,
    line_items: priced.map((p) => p.line),
  });
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
    .select({ entry: timeEntries, invoiceStatus: invoices.status, userName: users.name })
    .from(timeEntries)
    .leftJoin(invoices, eq(invoices.id, timeEntries.invoiceId))
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
