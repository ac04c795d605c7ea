// Project tools: projects (CRUD, status machine), their time entries, invoicing the unbilled time
// into a draft invoice and the invoicing report. Every tool needs the plan feature `projects`; the
// scopes are read:projects / write:projects. The data functions are store.ts.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Permission } from '../../core/access.ts';
import { currencyField } from '../../core/line-items.ts';
import { decimalPlaces } from '../../core/money.ts';
import { prefixMatch, type SortColumn } from '../../core/records.ts';
import { dateString, listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { describeMoves } from '../../core/state-machine.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { invoiceSchema } from '../invoices/store.ts';
import {
  deleteProject,
  insertProject,
  PROJECT_STATUSES,
  patchProject,
  projectRecord,
  projectRecords,
  projectSchema,
  projectStatusMachine,
  serializeProjects,
} from './store.ts';
import { projects } from './tables.ts';
import {
  deleteEntry,
  ENTRY_SORT_FIELDS,
  insertEntry,
  listEntries,
  patchEntry,
  readEntry,
  timeEntrySchema,
} from './time-entries.ts';
import {
  invoiceProject as invoiceProjectTime,
  invoicingReport,
  invoicingReportSchema,
} from './time-invoicing.ts';

// ---------------------------------------------------------------------------------------------
// Input fields

const MOVES = describeMoves(projectStatusMachine);

const nameField = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine(NO_NUL, nulMessage)
  .describe('Project name, 1-200 characters');
const leadIdField = objectId('lead')
  .nullable()
  .describe('Id of a live lead of this organization, the client (needed to invoice); null for none');
const statusField = z.enum(PROJECT_STATUSES).describe(`Project status. Moves: ${MOVES}`);
const rateField = z
  .number()
  .min(0)
  .max(1_000_000_000)
  .nullable()
  .describe(
    "Hourly rate in the currency's major unit (90.5 = 90.50), >= 0, at most the currency's decimals; null for none",
  );
const budgetField = z
  .number()
  .gt(0)
  .max(1_000_000)
  .refine((v) => decimalPlaces(v) <= 2, 'must have at most 2 decimals')
  .nullable()
  .describe('Hours budgeted, > 0 with up to 2 decimals; null for none');
const startsOnField = dateString('Start date').nullable().describe('Start date (YYYY-MM-DD); null clears it');
const dueOnField = dateString('Due date')
  .nullable()
  .describe('Due date (YYYY-MM-DD), not before starts_on; null clears it');
const descriptionField = z
  .string()
  .max(10_000)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('Free-text description, at most 10000 characters; null clears it');

const projectIdShape = { id: objectId('project') };
const entryIdShape = { ...projectIdShape, entryId: objectId('time entry') };

const entryUserField = objectId('user').describe(
  'Id of the active user of this organization who worked; default: the caller',
);
const entryDateField = dateString('Day worked');
const minutesField = z
  .number()
  .int()
  .min(1)
  .max(1440)
  .describe('Minutes worked, 1-1440 (a whole day at most)');
const entryDescriptionField = z
  .string()
  .trim()
  .min(1)
  .max(2000)
  .refine(NO_NUL, nulMessage)
  .describe('What was done, 1-2000 characters');
const billableField = z.boolean().describe('Whether the time is billed to the client (default true)');
const entryRateField = rateField.describe(
  "The entry's own hourly rate (currency's major unit, at most its decimals); null or absent: the project's rate",
);

/** Query strings carry booleans as text; MCP callers send real booleans. Both are accepted. */
const booleanParam = (what: string) =>
  z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .describe(`${what} (true or false)`);

// ---------------------------------------------------------------------------------------------
// Tools

type ProjectPermission = Extract<Permission, `projects.${string}`>;
const access = (kind: 'read' | 'write', permission: ProjectPermission) =>
  ({ kind, resource: 'projects', permission, feature: 'projects' }) as const;

const projectOutput = z.object({ project: projectSchema });
const entryOutput = z.object({ time_entry: timeEntrySchema });

const SORT_FIELDS = ['created_at', 'updated_at', 'name', 'due_on'] as const;
const SORT_COLUMNS = {
  created_at: projects.createdAt,
  updated_at: projects.updatedAt,
  name: projects.name,
  due_on: { column: projects.dueOn, nullsLast: true },
} satisfies Record<(typeof SORT_FIELDS)[number], SortColumn>;

export const listProjects = defineTool({
  name: 'list_projects',
  title: 'List projects',
  description:
    'Lists the projects of the organization, newest first, each with its billable, billed, unbilled and non-billable minutes; filter by status and lead; `search` matches the name. Needs a plan with projects.',
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    status: z.enum(PROJECT_STATUSES).optional().describe('Only projects in this status'),
    lead_id: objectId('lead').optional().describe('Only projects of this client lead'),
  }),
  output: pagedOutput('projects', projectSchema),
  access: access('read', 'projects.view'),
  toolset: 'projects',
  async handler(input, { db, auth }) {
    const conditions = projectRecords.liveConditions(auth.orgId);
    if (input.status) conditions.push(eq(projects.status, input.status));
    if (input.lead_id) conditions.push(eq(projects.leadId, input.lead_id));
    const page = await projectRecords.list(db, 'projects', (row) => row, input, {
      conditions,
      sortColumns: SORT_COLUMNS,
      match: (text) => prefixMatch(projects.search, text),
    });
    return { ...page, projects: await serializeProjects(db, auth.orgId, page.projects) };
  },
});

export const getProject = defineTool({
  name: 'get_project',
  title: 'Get a project',
  description:
    'Returns one project by id with its minutes: billable (billed + unbilled), billed (on finalized invoices), unbilled ' +
    'and non-billable. Find ids with list_projects. Needs a plan with projects.',
  input: z.strictObject(projectIdShape),
  output: projectOutput,
  access: access('read', 'projects.view'),
  toolset: 'projects',
  async handler(input, { db, auth }) {
    const row = await projectRecords.getLive(db, auth.orgId, input.id);
    return { project: await projectRecord(db, auth.orgId, row) };
  },
});

export const createProject = defineTool({
  name: 'create_project',
  title: 'Create a project',
  errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
  description:
    '`name` and `currency` (ISO 4217) are required; optional `lead_id` (the client, needed to invoice), `status` ' +
    '(default active), `hourly_rate` (default rate of its time), `budget_hours`, `starts_on`, `due_on` (not before ' +
    'starts_on) and `description`. Creates a project and returns it. Log time with log_time_entry. Needs a plan with projects.',
  input: z.strictObject({
    name: nameField,
    lead_id: leadIdField.optional(),
    status: statusField.optional(),
    currency: currencyField,
    hourly_rate: rateField.optional(),
    budget_hours: budgetField.optional(),
    starts_on: startsOnField.optional(),
    due_on: dueOnField.optional(),
    description: descriptionField.optional(),
  }),
  output: projectOutput,
  access: access('write', 'projects.create'),
  toolset: 'projects',
  async handler(input, ctx) {
    const row = await insertProject(ctx, input);
    return { project: await projectRecord(ctx.db, ctx.auth.orgId, row) };
  },
});

export const updateProject = defineTool({
  name: 'update_project',
  title: 'Update a project',
  errors: [
    { code: 'not_found', when: 'lead_id names no live lead of the organization' },
    { code: 'invalid_transition', when: 'the status move is not allowed' },
  ],
  description:
    'Changes only the fields sent of a project and returns it; a field sent as null is cleared. `status` moves follow: ' +
    `${MOVES}. The currency cannot change once time is logged. Needs a plan with projects.`,
  input: z.strictObject({
    ...projectIdShape,
    name: nameField.optional(),
    lead_id: leadIdField.optional(),
    status: statusField.optional(),
    currency: currencyField.optional(),
    hourly_rate: rateField.optional(),
    budget_hours: budgetField.optional(),
    starts_on: startsOnField.optional(),
    due_on: dueOnField.optional(),
    description: descriptionField.optional(),
  }),
  output: projectOutput,
  access: access('write', 'projects.edit'),
  annotations: { idempotentHint: true },
  toolset: 'projects',
  async handler(input, ctx) {
    const { id, ...changes } = input;
    const row = await patchProject(ctx, id, changes);
    return { project: await projectRecord(ctx.db, ctx.auth.orgId, row) };
  },
});

export const deleteProjectTool = defineTool({
  name: 'delete_project',
  title: 'Delete a project',
  errors: [{ code: 'invalid_operation', when: 'time of the project is on an invoice that is not void' }],
  description:
    'Deletes a project for good with its time entries (its tasks stay, without the project). Refused (400) while any of ' +
    'its time is on a draft or finalized invoice: delete the draft or void the invoice first. Needs a plan with projects.',
  input: z.strictObject(projectIdShape),
  output: messageOutput,
  access: access('write', 'projects.delete'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'projects',
  async handler(input, ctx) {
    await deleteProject(ctx, input.id);
    return { message: 'Project deleted' };
  },
});

export const listTimeEntries = defineTool({
  name: 'list_time_entries',
  title: 'List time entries',
  description:
    'Lists the time entries of one project, latest day first, each with its effective rate, amount and invoice_id; filter by billable, billed, user and date range. Needs a plan with projects.',
  input: z.strictObject({
    ...projectIdShape,
    page: listParams(ENTRY_SORT_FIELDS).page,
    limit: listParams(ENTRY_SORT_FIELDS).limit,
    sort: listParams(ENTRY_SORT_FIELDS).sort,
    billable: booleanParam('Only billable (true) or non-billable (false) entries').optional(),
    billed: booleanParam('Only billed (true) or not billed (false) entries').optional(),
    user_id: objectId('user').optional().describe('Only entries of this user'),
    date_from: dateString('Only entries on or after this day').optional(),
    date_to: dateString('Only entries on or before this day').optional(),
  }),
  output: pagedOutput('time_entries', timeEntrySchema),
  access: access('read', 'projects.view'),
  toolset: 'projects',
  async handler(input, { db, auth }) {
    const { id, ...filters } = input;
    return listEntries(db, auth.orgId, id, filters);
  },
});

export const getTimeEntry = defineTool({
  name: 'get_time_entry',
  title: 'Get a time entry',
  description:
    'Returns one time entry of a project with its effective rate, amount, invoice_id and whether it is billed. Find ids ' +
    'with list_time_entries. Needs a plan with projects.',
  input: z.strictObject(entryIdShape),
  output: entryOutput,
  access: access('read', 'projects.view'),
  toolset: 'projects',
  async handler(input, { db, auth }) {
    return { time_entry: await readEntry(db, auth.orgId, input.id, input.entryId) };
  },
});

export const logTimeEntry = defineTool({
  name: 'log_time_entry',
  title: 'Log time on a project',
  errors: [{ code: 'invalid_operation', when: 'the project is archived' }],
  description:
    'Logs time on a project (`id`) and returns the entry: `date`, `minutes` (1-1440) and `description` are required; ' +
    "`user_id` defaults to the caller, `billable` to true, `hourly_rate` to the project's. Needs a plan with projects.",
  input: z.strictObject({
    ...projectIdShape,
    user_id: entryUserField.optional(),
    date: entryDateField,
    minutes: minutesField,
    description: entryDescriptionField,
    billable: billableField.optional(),
    hourly_rate: entryRateField.optional(),
  }),
  output: entryOutput,
  access: access('write', 'projects.edit'),
  toolset: 'projects',
  async handler(input, ctx) {
    const { id, ...entry } = input;
    return { time_entry: await insertEntry(ctx, id, entry) };
  },
});

const frozenEntry = {
  code: 'invalid_operation',
  when: 'the entry is on an invoice that is not void (billed, or on a draft)',
} as const;

export const updateTimeEntry = defineTool({
  name: 'update_time_entry',
  title: 'Update a time entry',
  errors: [frozenEntry],
  description:
    "Changes only the fields sent of a time entry and returns it; `hourly_rate: null` falls back to the project's rate. " +
    'An entry on a finalized invoice (billed) or on a draft invoice is frozen (400 naming invoice_id); on a void ' +
    'invoice it is editable again. Needs a plan with projects.',
  input: z.strictObject({
    ...entryIdShape,
    user_id: entryUserField.optional().describe('Id of the active user of this organization who worked'),
    date: entryDateField.optional(),
    minutes: minutesField.optional(),
    description: entryDescriptionField.optional(),
    billable: billableField.optional(),
    hourly_rate: entryRateField.optional(),
  }),
  output: entryOutput,
  access: access('write', 'projects.edit'),
  annotations: { idempotentHint: true },
  toolset: 'projects',
  async handler(input, ctx) {
    const { id, entryId, ...changes } = input;
    return { time_entry: await patchEntry(ctx, id, entryId, changes) };
  },
});

export const deleteTimeEntry = defineTool({
  name: 'delete_time_entry',
  title: 'Delete a time entry',
  errors: [frozenEntry],
  description:
    'Deletes a time entry for good. An entry on a finalized invoice (billed) or on a draft invoice cannot be deleted ' +
    '(400 naming invoice_id). Needs a plan with projects.',
  input: z.strictObject(entryIdShape),
  output: messageOutput,
  access: access('write', 'projects.edit'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'projects',
  async handler(input, ctx) {
    await deleteEntry(ctx, input.id, input.entryId);
    return { message: 'Time entry deleted' };
  },
});

export const invoiceProject = defineTool({
  name: 'invoice_project',
  title: "Invoice a project's time",
  errors: [{ code: 'not_found', when: "the project's lead is no longer live" }],
  description:
    "Creates a DRAFT invoice for the project's client lead from its unbilled billable time entries (one line per entry, minutes x rate / 60); entries count as billed once the invoice is finalized. 400 when the project has no lead_id, an entry has no rate, or nothing is unbilled. Sends nothing. Needs a plan with projects.",
  input: z.strictObject(projectIdShape),
  output: z.object({ invoice: invoiceSchema }),
  access: access('write', 'projects.edit'),
  toolset: 'projects',
  async handler(input, ctx) {
    return { invoice: await invoiceProjectTime(ctx, input.id) };
  },
});

export const getProjectInvoicingReport = defineTool({
  name: 'get_project_invoicing_report',
  title: "Get a project's invoicing report",
  description:
    "Returns a project's billed and unbilled time and money: minutes billable/billed/unbilled/non-billable, " +
    'billed_amount (as invoiced) and unbilled_amount (minutes × effective rate / 60, rounded per entry), in total, ' +
    "by_user and by_month (YYYY-MM). Exact amounts in the project's currency. Needs a plan with projects.",
  input: z.strictObject(projectIdShape),
  output: z.object({ report: invoicingReportSchema }),
  access: access('read', 'projects.view'),
  toolset: 'projects',
  async handler(input, { db, auth }) {
    return { report: await invoicingReport(db, auth.orgId, input.id) };
  },
});

export const projectTools = [
  listProjects,
  getProject,
  createProject,
  updateProject,
  deleteProjectTool,
  listTimeEntries,
  getTimeEntry,
  logTimeEntry,
  updateTimeEntry,
  deleteTimeEntry,
  invoiceProject,
  getProjectInvoicingReport,
];
