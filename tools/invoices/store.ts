// Invoices' data functions: drafts with priced lines (core/line-items.ts, exact money in minor
// units), finalizing under a per-organization counter row lock (gap-free INV-000001 numbers),
// payments, void and uncollectible. Every status move goes through invoiceStatusMachine, so a
// refused move is the 400 invalid_transition; editing or deleting a non-draft is refused the same
// way. A draft is deleted for good (docs/decisions.md "Invoices"); finalized invoices are never deleted.
import { getTableColumns, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { InvoiceProjectsHook } from '../../core/area.ts';
import { type ErrorDetail, validationError } from '../../core/errors.ts';
import type { LineItemInput } from '../../core/line-items.ts';
import { liveCountSql } from '../../core/live-counts.ts';
import { decimalPlaces, formatMinor, fromMinor, minorDigits, toMinor } from '../../core/money.ts';
import { auditFields, auditValues, defineRecordTable, type RecordContext } from '../../core/records.ts';
import { iso } from '../../core/schemas.ts';
import { defineStateMachine, type StateMachine } from '../../core/state-machine.ts';
import { defineDraftRules } from '../documents/drafts.ts';
import { nextDocumentNumber } from '../documents/numbering.ts';
import { type NewPricedDocument, type PricedDocumentState, pricedDocument } from '../documents/shape.ts';
import { type InvoiceRow, invoices, type StoredPayment } from './tables.ts';

export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'void', 'uncollectible'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/**
 * docs/billing.md "Invoices": draft -> open -> paid | void | uncollectible; uncollectible -> paid | void.
 * Typed by hand: the invoice events' payloads (events.ts) are built from the record, whose status
 * comes from this machine, and the machine's moves name those events; inferring its type would be
 * a circle the compiler refuses.
 */
export const invoiceStatusMachine: StateMachine<InvoiceStatus> = defineStateMachine({
  resource: 'invoice',
  field: 'status',
  states: INVOICE_STATUSES,
  initial: 'draft',
  moves: {
    draft: { open: null },
    open: { paid: 'invoice.paid', void: null, uncollectible: null },
    uncollectible: { paid: 'invoice.paid', void: null },
  },
});

// ---------------------------------------------------------------------------------------------
// Record shape

const paymentSchema = z
  .object({
    amount: z.number().describe("Amount paid in the invoice's currency (major unit)"),
    paid_at: z.string().describe('When it was paid (ISO 8601)'),
    method: z.string().nullable().describe('How it was paid (free text, e.g. bank transfer), or null'),
    reference: z.string().nullable().describe('Payment reference (e.g. a transfer id), or null'),
  })
  .describe('One recorded payment');

export const invoiceSchema = z
  .object({
    _id: z.string().describe('Invoice id (24 hex characters)'),
    lead_id: z.string().describe('Id of the lead billed'),
    contact_id: z.string().nullable().describe('Id of the contact billed (a contact of the lead), or null'),
    opportunity_id: z
      .string()
      .nullable()
      .describe('Id of the deal invoiced (an opportunity of the lead), or null'),
    project_id: z
      .string()
      .nullable()
      .describe('Id of the project whose time it bills (of the same lead), or null'),
    number: z.string().nullable().describe('INV-000001..., given when finalized; null while draft'),
    status: invoiceStatusMachine.schema.describe('draft, open, paid, void or uncollectible'),
    currency: z.string().describe('ISO 4217 currency code of every amount'),
    issue_date: z.string().nullable().describe('Issue date (YYYY-MM-DD), or null'),
    due_date: z.string().nullable().describe('Due date (YYYY-MM-DD), or null'),
    notes: z.string().nullable().describe('Free-text notes, or null'),
    ...pricedDocument.recordShape,
    amount_paid: z.number().describe('Sum of the recorded payments'),
    amount_due: z.number().describe('total - amount_paid'),
    payments: z.array(paymentSchema).describe('The recorded payments, oldest first'),
    is_overdue: z
      .boolean()
      .describe(
        'True while the invoice is open and past its due date (set by the daily job; cleared when paid, void or uncollectible)',
      ),
    finalized_at: z.string().nullable().describe('When it was finalized (ISO 8601), or null while draft'),
    paid_at: z
      .string()
      .nullable()
      .describe('When the payment that reached the total was made (ISO 8601), or null'),
    voided_at: z.string().nullable().describe('When it was voided (ISO 8601), or null'),
    sent_at: z
      .string()
      .nullable()
      .describe('When it was last sent by mail (POST /invoices/{id}/send, ISO 8601), or null'),
    ...auditFields('invoice'),
  })
  .describe('An invoice to a lead');
export type InvoiceRecord = z.output<typeof invoiceSchema>;

const { search: _search, ...invoiceColumns } = getTableColumns(invoices);
export type InvoiceData = Omit<InvoiceRow, 'search'>;

export function toStatus(value: string): InvoiceStatus {
  return invoiceStatusMachine.parse(value);
}

export function serializeInvoice(row: InvoiceData): InvoiceRecord {
  return {
    _id: row.id,
    lead_id: row.leadId,
    contact_id: row.contactId,
    opportunity_id: row.opportunityId,
    project_id: row.projectId,
    number: row.number,
    status: toStatus(row.status),
    currency: row.currency,
    issue_date: row.issueDate,
    due_date: row.dueDate,
    notes: row.notes,
    ...pricedDocument.recordValues(row),
    amount_paid: fromMinor(BigInt(row.amountPaidMinor), row.currency),
    amount_due: fromMinor(BigInt(row.totalMinor) - BigInt(row.amountPaidMinor), row.currency),
    payments: row.payments.map((p) => ({
      amount: Number(p.amount),
      paid_at: p.paid_at,
      method: p.method,
      reference: p.reference,
    })),
    is_overdue: row.isOverdue,
    finalized_at: iso(row.finalizedAt),
    paid_at: iso(row.paidAt),
    voided_at: iso(row.voidedAt),
    sent_at: iso(row.sentAt),
    ...auditValues(row),
  };
}

/** The invoices table on the record helper: live lookups (404 "Invoice not found") and the list. */
export const invoiceRecords = defineRecordTable<InvoiceData>({
  label: 'Invoice',
  table: invoices,
  select: (db) => db.select(invoiceColumns).from(invoices).$dynamic(),
  update: (db, set, where) => db.update(invoices).set(set).where(where).returning(invoiceColumns),
});

/**
 * The live-count ledger's kind of invoices (migration 0031 attaches the invoices table under it,
 * bucketed by `status`).
 */
const INVOICES_COUNT_KIND = 'invoices';

/**
 * The organization's live invoices, or those in `status`, from the trigger-kept ledger
 * (core/live-counts.ts) as a scalar expression a list reads in its page's own statement: no count
 * over 100,000 invoices on every page of a list.
 */
export function liveInvoicesTotal(orgId: string, status?: InvoiceStatus): SQL<number> {
  return liveCountSql(orgId, INVOICES_COUNT_KIND, status ? [status] : undefined);
}

// ---------------------------------------------------------------------------------------------
// Drafts

interface InvoiceState extends PricedDocumentState {
  dueDate: string | null;
}

export interface NewInvoice extends NewPricedDocument {
  project_id?: string | null | undefined;
  due_date?: string | null | undefined;
}
export type InvoiceInput = Partial<NewInvoice>;

/** The lines' amounts need the currency; the references must belong to the invoice's lead. */
function checkState(ctx: RecordContext, state: InvoiceState): Promise<void> {
  return pricedDocument.check(ctx, state, 'invoice', { field: 'due_date', value: state.dueDate });
}

/**
 * A project of the organization whose client is the invoice's lead, as the areas holding projects
 * answer (`projects`: tools/projects' hook), else a 400 naming `field`.
 */
async function assertProjectOfLead(
  ctx: RecordContext,
  projects: readonly InvoiceProjectsHook[],
  projectId: string,
  leadId: string,
  field: 'project_id' | 'lead_id',
): Promise<void> {
  for (const hook of projects) {
    if (await hook.isProjectOfLead(ctx.db, ctx.auth.orgId, projectId, leadId)) return;
  }
  const message =
    field === 'project_id'
      ? "must be the id of a project of this organization whose lead is the invoice's lead"
      : "must be the lead of the invoice's project";
  throw validationError([{ field, message, code: 'invalid_project' }]);
}

/** Only a draft may be created, edited or deleted, and is deleted for good (tools/documents/drafts.ts). */
const drafts = defineDraftRules({
  records: invoiceRecords,
  machine: invoiceStatusMachine,
  check: checkState,
  totals: (state: InvoiceState) => pricedDocument.totals(state),
});

/**
 * Creates a draft invoice. `projects` are the invoice-project hooks (tools/index.ts collects them);
 * a caller that names no project passes none.
 */
export async function insertInvoice(
  ctx: RecordContext,
  input: NewInvoice,
  projects: readonly InvoiceProjectsHook[],
): Promise<InvoiceRecord> {
  const values = await drafts.newDraft(ctx, {
    ...pricedDocument.newState(input),
    dueDate: input.due_date ?? null,
  });
  const projectId = input.project_id ?? null;
  if (projectId !== null) await assertProjectOfLead(ctx, projects, projectId, values.leadId, 'project_id');
  const rows = await ctx.db
    .insert(invoices)
    .values({ ...values, projectId })
    .returning(invoiceColumns);
  return invoiceRecords.created(ctx, 'invoice.created', serializeInvoice, rows);
}

/** Whether another area's records were billed on this invoice (it was made by POST /projects/{id}/invoice). */
async function holdsTime(
  ctx: RecordContext,
  projects: readonly InvoiceProjectsHook[],
  invoiceId: string,
): Promise<boolean> {
  for (const hook of projects) {
    if (await hook.billsOnInvoice(ctx.db, ctx.auth.orgId, invoiceId)) return true;
  }
  return false;
}

/** A line as it prices: the fields that decide its amount and tax, absent percents as 0. */
function lineKey(line: LineItemInput): string {
  return JSON.stringify([
    line.description,
    line.quantity,
    line.unit_price,
    line.discount_percent ?? 0,
    line.tax_percent ?? 0,
  ]);
}

/**
 * A draft made from a project's time bills what the time produced: its lines, currency and lead are
 * the time entries' (each entry remembers the amount of its line, which the project's invoicing
 * report counts). Changing them would make the invoice and the report disagree, so it is refused
 * with a 400 naming the field; the way to change them is to delete the draft (which releases the
 * entries), correct the time and invoice again. Sending the same values (a PUT of the whole draft)
 * is fine. docs/decisions.md "Invoices of project time".
 */
function assertTimeLinesKept(before: InvoiceData, input: InvoiceInput): void {
  const message = (what: string) =>
    `${what} of an invoice made from project time cannot change: delete the draft to release its time entries, correct them, and invoice again`;
  const details: ErrorDetail[] = [];
  if (input.currency !== undefined && input.currency !== before.currency) {
    details.push({ field: 'currency', message: message('the currency'), code: 'time_invoice_locked' });
  }
  if (input.lead_id !== undefined && input.lead_id !== before.leadId) {
    details.push({ field: 'lead_id', message: message('the client'), code: 'time_invoice_locked' });
  }
  if (
    input.line_items !== undefined &&
    (input.line_items === null ||
      input.line_items.map(lineKey).join('\n') !== before.lineItems.map(lineKey).join('\n'))
  ) {
    details.push({ field: 'line_items', message: message('the lines'), code: 'time_invoice_locked' });
  }
  if (details.length > 0) throw validationError(details);
}

export async function patchInvoice(
  ctx: RecordContext,
  id: string,
  input: InvoiceInput,
  projects: readonly InvoiceProjectsHook[],
): Promise<InvoiceRecord> {
  const row = await drafts.patchDraft(ctx, id, {
    async merge(before) {
      if (await holdsTime(ctx, projects, before.id)) assertTimeLinesKept(before, input);
      return pricedDocument.merge(before, input, {
        before: { dueDate: before.dueDate },
        patch: { dueDate: input.due_date },
      });
    },
    async leadChanged(next, before) {
      if (before.projectId !== null) {
        await assertProjectOfLead(ctx, projects, before.projectId, next.leadId, 'lead_id');
      }
    },
  });
  return serializeInvoice(row);
}

/** Deletes a draft for good (it has no number, so no gap can open); other states are refused. */
export const deleteDraft = drafts.deleteDraft;

// ---------------------------------------------------------------------------------------------
// Moves

export async function finalizeInvoice(ctx: RecordContext, id: string): Promise<InvoiceRecord> {
  const before = await invoiceRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  invoiceStatusMachine.assertMove(toStatus(before.status), 'open');
  if (before.status === 'open') return serializeInvoice(before);
  // Gap-free: concurrent finalizes queue behind the counter row (tools/documents/numbering.ts).
  const number = await nextDocumentNumber(ctx, 'invoice');
  const row = await invoiceRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    status: 'open',
    number,
    issueDate: before.issueDate ?? ctx.now.toISOString().slice(0, 10),
    finalizedAt: ctx.now,
    updatedAt: ctx.now,
  });
  return serializeInvoice(row);
}

/** void or uncollectible, through the machine. */
export async function moveInvoice(
  ctx: RecordContext,
  id: string,
  to: 'void' | 'uncollectible',
): Promise<InvoiceRecord> {
  const before = await invoiceRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const from = toStatus(before.status);
  const event = invoiceStatusMachine.eventOf(from, to);
  if (from === to) return serializeInvoice(before);
  const row = await invoiceRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    status: to,
    voidedAt: to === 'void' ? ctx.now : before.voidedAt,
    // is_overdue means "open and past due": an invoice voided or written off is neither.
    isOverdue: false,
    updatedAt: ctx.now,
  });
  const record = serializeInvoice(row);
  if (event !== null) await ctx.emit(event, { ...record, previous_status: from });
  return record;
}

export interface NewPayment {
  amount: number;
  paid_at?: string | undefined;
  method?: string | null | undefined;
  reference?: string | null | undefined;
}

/**
 * Records a payment on an open (or uncollectible) invoice. Reaching the total moves it to paid
 * (paid_at, invoice.paid); more than the amount due is a 400 naming `amount`.
 */
export async function recordPayment(
  ctx: RecordContext,
  id: string,
  input: NewPayment,
): Promise<InvoiceRecord> {
  const before = await invoiceRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const from = toStatus(before.status);
  // A payment is only taken where the move to paid is allowed (open, uncollectible).
  if (from === 'paid')
    invoiceStatusMachine.refuse('the invoice is already paid in full; it takes no further payment');
  invoiceStatusMachine.assertMove(from, 'paid');
  const digits = minorDigits(before.currency);
  if (decimalPlaces(input.amount) > digits) {
    throw validationError([
      {
        field: 'amount',
        message: `must have at most ${digits} decimals in ${before.currency}`,
        code: 'too_many_decimals',
      },
    ]);
  }
  const amount = toMinor(input.amount, before.currency);
  const due = BigInt(before.totalMinor) - BigInt(before.amountPaidMinor);
  if (amount > due) {
    throw validationError([
      {
        field: 'amount',
        message: `must not exceed the amount due (${formatMinor(due, before.currency)} ${before.currency})`,
        code: 'overpayment',
      },
    ]);
  }
  const paidMinor = BigInt(before.amountPaidMinor) + amount;
  const payment: StoredPayment = {
    amount: formatMinor(amount, before.currency),
    // One text for one instant on the payment and the invoice: the UTC form the invoice's paid_at
    // column gives back (whatever offset the caller wrote, whatever the year).
    paid_at: (input.paid_at === undefined ? ctx.now : new Date(input.paid_at)).toISOString(),
    method: input.method ?? null,
    reference: input.reference ?? null,
    recorded_by: ctx.auth.userId,
  };
  const reachesTotal = paidMinor === BigInt(before.totalMinor);
  const row = await invoiceRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    amountPaidMinor: paidMinor,
    payments: [...before.payments, payment],
    // The invoice is paid when the payment that completed it was made, not when it was recorded.
    ...(reachesTotal ? { status: 'paid', paidAt: new Date(payment.paid_at), isOverdue: false } : {}),
    updatedAt: ctx.now,
  });
  const record = serializeInvoice(row);
  if (reachesTotal) {
    const event = invoiceStatusMachine.eventOf(from, 'paid');
    if (event !== null) await ctx.emit(event, { ...record, previous_status: from });
  }
  return record;
}
