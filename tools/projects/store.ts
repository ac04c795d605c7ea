// Projects' data functions: projects (status machine, money in minor units) and the minutes of
// their time. Time entries are in time-entries.ts; invoicing the unbilled billable time into a
// draft invoice (through the invoices area's own insertInvoice) and the invoicing report in
// time-invoicing.ts. An entry's billing state is derived, never stored: it is billed while the
// invoice it is on (invoice_id) is open, paid or uncollectible; on a draft it is still unbilled
// (but taken), a void invoice gives it back, a deleted draft releases it.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { AppError, type ErrorDetail, validationError } from '../../core/errors.ts';
import {
  decimalPlaces,
  divideRounded,
  fromMinor,
  MAX_MINOR,
  minorDigits,
  toMinor,
} from '../../core/money.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  mergePatch,
  newRecordStamp,
  type RecordContext,
} from '../../core/records.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import { countBillingInvoicesOfProject, invoiceJoin } from '../invoices/lookups.ts';
import { leadRecords } from '../leads/store.ts';
import { type ProjectRow, projects, timeEntries } from './tables.ts';

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

function toProjectStatus(value: string): ProjectStatus {
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

export const rateOut = (minor: bigint | null, currency: string) =>
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
export const billedSql = sql<boolean>`coalesce(${invoiceJoin.status} in ('open', 'paid', 'uncollectible'), false)`;

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
    .leftJoin(invoiceJoin.table, invoiceJoin.on(timeEntries.invoiceId))
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

export const minutesShape = {
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

function serializeProject(row: ProjectRow, minutes: MinuteTotals = ZERO_MINUTES): ProjectRecord {
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
  // The project's invoices that still bill its client (live, not void, a draft of its time or one
  // made by hand) keep its lead, so an invoice and its project never name two clients
  // (docs/billing.md "Projects and time").
  if (next.leadId !== previous.leadId && (await countBillingInvoicesOfProject(ctx.db, before.id)) > 0) {
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
    .innerJoin(invoiceJoin.table, invoiceJoin.on(timeEntries.invoiceId))
    .where(and(eq(timeEntries.projectId, before.id), sql`${invoiceJoin.status} <> 'void'`));
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
