// Invoice tools: list, get, create, update and delete drafts, finalize, record payments, void and
// mark uncollectible. The data functions, the record shape and the status machine are in store.ts.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { InvoiceProjectsHook } from '../../core/area.ts';
import { confirmShape, sendResultShape } from '../../core/confirm.ts';
import { queuedMailSchema } from '../../core/mail-outbox.ts';
import { numberOrWordsMatch } from '../../core/records.ts';
import { fileOutputShape } from '../../core/route.ts';
import { dateString, objectId, pagedOutput } from '../../core/schemas.ts';
import { describeMoves } from '../../core/state-machine.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool, type Tool } from '../../core/tool.ts';
import { documentIdShape, documentTools, pricedTools } from '../documents/document-tools.ts';
import { invoicePdfFilename, previewSend, renderInvoicePdf, sendInvoice as sendByMail } from './delivery.ts';
import {
  deleteDraft,
  finalizeInvoice as finalizeDraft,
  INVOICE_STATUSES,
  insertInvoice,
  invoiceRecords,
  invoiceSchema,
  invoiceStatusMachine,
  liveInvoicesTotal,
  moveInvoice,
  patchInvoice,
  recordPayment,
  serializeInvoice,
} from './store.ts';
import { invoices } from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Input fields

const fields = pricedTools.inputFields({
  noun: 'invoice',
  contactRole: 'bill',
  dealRole: 'invoiced',
  issuedBy: 'finalize',
});
const projectIdField = objectId('project')
  .nullable()
  .describe(
    "Id of a project of this organization whose lead is the invoice's lead (the time it bills); null for none",
  );
const dueDateField = dateString('Due date')
  .nullable()
  .describe('Due date (YYYY-MM-DD), not before issue_date; null clears it');

const invoiceIdShape = documentIdShape('invoice');

const inputs = pricedTools.inputs({
  kind: 'invoice',
  fields,
  leadChange: 'Bills another live lead; its contact and opportunity must then belong to it',
  createRefs: { project_id: projectIdField.optional() },
  dated: { due_date: dueDateField.optional() },
});

/**
 * Whether a list's conditions are the organization's live invoices (two: organization, not trashed)
 * and at most the status filter, with no search: then the ledger knows its total.
 */
function onlyStatusFilter(
  input: { status?: string | undefined; search?: string | undefined },
  query: { conditions: readonly unknown[] },
): boolean {
  return input.search === undefined && query.conditions.length === 2 + (input.status ? 1 : 0);
}

// ---------------------------------------------------------------------------------------------
// Tools

type InvoicePermission = 'invoices.view' | 'invoices.create' | 'invoices.edit' | 'invoices.delete';
const access = (kind: 'read' | 'write', permission: InvoicePermission) =>
  ({ kind, resource: 'invoices', permission }) as const;

const MOVES = describeMoves(invoiceStatusMachine);
const invoiceTool = documentTools('invoice', invoiceRecords, serializeInvoice, invoiceSchema);

export const listInvoices = invoiceTool.list({
  title: 'List invoices',
  description:
    'Lists the invoices of the organization, newest first, filtered by status, lead, overdue and issue date range; `search` matches the number and notes.',
  sortFields: ['created_at', 'updated_at', 'issue_date', 'due_date', 'total', 'number'],
  sortColumns: {
    ...pricedTools.sortColumns(invoices),
    due_date: { column: invoices.dueDate, nullsLast: true },
    number: { column: invoices.number, nullsLast: true },
  },
  statuses: INVOICE_STATUSES,
  own: {
    is_overdue: z
      .enum(['true', 'false'])
      .optional()
      .describe('true: only invoices flagged overdue; false: only those not flagged'),
    ...pricedTools.issueDateRange('invoices'),
  },
  output: pagedOutput('invoices', invoiceSchema),
  access: access('read', 'invoices.view'),
  columns: invoices,
  filters: (input) => [
    ...(input.is_overdue ? [eq(invoices.isOverdue, input.is_overdue === 'true')] : []),
    ...pricedTools.issueDateFilters(invoices.issueDate, input),
  ],
  match: (text) => numberOrWordsMatch(invoices.number, invoices.search, text),
  page: (db, input, query, orgId) =>
    invoiceRecords.list(db, 'invoices', serializeInvoice, input, {
      ...query,
      // Filtered by nothing but (perhaps) status, the total is the ledger's (one index range read);
      // any other filter or a search is counted as it stands.
      ...(onlyStatusFilter(input, query) ? { total: liveInvoicesTotal(orgId, input.status) } : {}),
    }),
});

export const getInvoice = invoiceTool.get({
  title: 'Get an invoice',
  description:
    'Returns one invoice by id with its priced lines, totals, payments, amount_paid and amount_due. Find ids with list_invoices.',
  access: access('read', 'invoices.view'),
});

/** create_invoice, checking a named project with the invoice-project hooks (tools/index.ts collects them). */
export function createInvoiceTool(projects: readonly InvoiceProjectsHook[]) {
  return invoiceTool.create({
    title: 'Create an invoice',
    description:
      'Creates a draft invoice (number null) with line items for a live lead; contact_id and opportunity_id must belong to the lead. Returns it priced (line amounts, subtotal, tax_total, total). Finalize it with finalize_invoice to give it a number.',
    input: inputs.create,
    access: access('write', 'invoices.create'),
    create: (ctx, input) => insertInvoice(ctx, input, projects),
  });
}

/** update_invoice, keeping the lines of a draft billed from project time (the invoice-project hooks). */
export function updateInvoiceTool(projects: readonly InvoiceProjectsHook[]) {
  return invoiceTool.update({
    title: 'Update a draft invoice',
    description:
      'Changes only the fields sent of a draft invoice and returns it; a field sent as null is cleared, line_items replaces every ' +
      'line. A finalized invoice (open, paid, void, uncollectible) is frozen: 400 invalid_transition.',
    input: inputs.update,
    access: access('write', 'invoices.edit'),
    update: (ctx, id, changes) => patchInvoice(ctx, id, changes, projects),
  });
}

const deleteInvoice = invoiceTool.remove({
  label: 'Invoice',
  description:
    'Deletes a draft invoice for good (it has no number yet). A finalized invoice is never deleted: void it instead ' +
    '(400 invalid_transition).',
  access: access('write', 'invoices.delete'),
  deleteDraft,
});

export const finalizeInvoice = invoiceTool.move({
  name: 'finalize_invoice',
  title: 'Finalize an invoice',
  description:
    'Moves a draft invoice to open: it gets the next number of the organization (INV-000001, gap-free), its issue date ' +
    `(today when empty) and its lines freeze. The moves: ${MOVES}. Finalizing an open invoice again returns it unchanged.`,
  access: access('write', 'invoices.edit'),
  errors: [{ code: 'invalid_transition', when: 'the invoice is paid, void or uncollectible' }],
  annotations: { idempotentHint: true },
  move: finalizeDraft,
});

export const recordInvoicePayment = defineTool({
  name: 'record_invoice_payment',
  title: 'Record an invoice payment',
  description:
    'Records a payment on an open or uncollectible invoice and returns the invoice with amount_paid and amount_due. When the ' +
    'payments reach the total the invoice becomes paid (paid_at, invoice.paid). More than the amount due is a 400; a draft, ' +
    'paid or void invoice is a 400 invalid_transition.',
  input: z.strictObject({
    ...invoiceIdShape,
    amount: z
      .number()
      .gt(0)
      .max(1e15)
      .describe(
        "Amount paid in the invoice's currency (major unit), > 0, at most the currency's decimals and the amount due",
      ),
    paid_at: z.iso.datetime({ offset: true }).optional().describe('When it was paid (ISO 8601; default now)'),
    method: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .refine(NO_NUL, nulMessage)
      .optional()
      .describe('How it was paid, free text of 1-100 characters (e.g. bank transfer, card)'),
    reference: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .refine(NO_NUL, nulMessage)
      .optional()
      .describe('Payment reference, 1-200 characters (e.g. a transfer id)'),
  }),
  output: invoiceTool.output,
  access: access('write', 'invoices.edit'),
  errors: [{ code: 'invalid_transition', when: 'the invoice is a draft, paid or void' }],
  toolset: 'billing',
  async handler(input, ctx) {
    const { id, ...payment } = input;
    return { invoice: await recordPayment(ctx, id, payment) };
  },
});

export const voidInvoice = invoiceTool.move({
  name: 'void_invoice',
  title: 'Void an invoice',
  description:
    'Voids an open or uncollectible invoice: it stays on record with its number but is no longer owed. A draft is deleted ' +
    'instead; a paid invoice cannot be voided (400 invalid_transition).',
  access: access('write', 'invoices.edit'),
  errors: [{ code: 'invalid_transition', when: 'the invoice is a draft or paid' }],
  annotations: { destructiveHint: true, idempotentHint: true },
  move: (ctx, id) => moveInvoice(ctx, id, 'void'),
});

export const markInvoiceUncollectible = invoiceTool.move({
  name: 'mark_invoice_uncollectible',
  title: 'Mark an invoice uncollectible',
  description:
    'Marks an open invoice uncollectible (written off); payments may still be recorded on it, or it may be voided. Any ' +
    'other state is a 400 invalid_transition.',
  access: access('write', 'invoices.edit'),
  errors: [{ code: 'invalid_transition', when: 'the invoice is not open' }],
  annotations: { destructiveHint: true, idempotentHint: true },
  move: (ctx, id) => moveInvoice(ctx, id, 'uncollectible'),
});

export const sendInvoice = defineTool({
  name: 'send_invoice',
  title: 'Send an invoice by e-mail',
  description:
    "Sends an invoice to the customer by e-mail as a PDF: to `to`, else the invoice contact's or the lead's first contact's e-mail. A draft is finalized first; paid and void invoices cannot be sent.",
  input: z.strictObject({
    ...invoiceIdShape,
    to: z
      .email()
      .max(254)
      .optional()
      .describe("Recipient e-mail address; default: the invoice contact's, else the lead's first contact's"),
    message: z
      .string()
      .trim()
      .max(5000)
      .refine(NO_NUL, nulMessage)
      .optional()
      .describe('A personal message placed above the standard text of the mail, at most 5000 characters'),
    ...confirmShape,
  }),
  output: z.object({
    ...sendResultShape,
    invoice: invoiceSchema.optional().describe('The invoice after sending (absent in a preview)'),
    mail: queuedMailSchema.optional(),
  }),
  access: access('write', 'invoices.edit'),
  errors: [
    { code: 'invalid_transition', when: 'the invoice is paid or void' },
    { code: 'validation_failed', when: 'no `to` and no contact e-mail to send to' },
  ],
  annotations: { idempotentHint: false, openWorldHint: true },
  toolset: 'billing',
  sends: {
    async preview(input, ctx) {
      const { id, ...send } = input;
      const draft = await previewSend(ctx, id, send);
      const amounts = [{ label: 'total', amount: draft.total, currency: draft.currency }];
      if (draft.amount_due !== draft.total) {
        amounts.push({ label: 'amount_due', amount: draft.amount_due, currency: draft.currency });
      }
      const name = draft.number ?? 'draft (finalized first, it gets its number)';
      return pricedTools.sendPreview(ctx, {
        action: `E-mail invoice ${name} as a PDF to ${draft.to}`,
        to: draft.to,
        subject: draft.subject,
        amounts,
        attachments: [
          draft.number
            ? invoicePdfFilename({ id, number: draft.number })
            : 'the invoice PDF, named by its number',
        ],
        details: pricedTools.messageDetails(send.message),
      });
    },
  },
  async handler(input, ctx) {
    const { id, ...send } = input;
    return { sent: true, ...(await sendByMail(ctx, id, send)) };
  },
});

export const getInvoicePdf = defineTool({
  name: 'get_invoice_pdf',
  title: 'Get the PDF of an invoice',
  description:
    'The invoice as a PDF (number or DRAFT, dates, lines, totals, amount paid and due). Over REST, GET ' +
    '/api/v1/invoices/{id}/pdf answers the file itself (application/pdf, attachment). Here it returns a summary: the file ' +
    'name, size and the download path; use send_invoice to e-mail it.',
  input: z.strictObject(invoiceIdShape),
  output: z.object({
    ...fileOutputShape,
    number: z.string().nullable().describe('The invoice number; null for a draft (the PDF says DRAFT)'),
    status: z.enum(INVOICE_STATUSES).describe('The invoice status printed on the PDF'),
    download_path: z.string().describe('REST path answering the PDF: /api/v1/invoices/{id}/pdf'),
  }),
  access: access('read', 'invoices.view'),
  toolset: 'billing',
  async handler(input, ctx) {
    const row = await invoiceRecords.getLive(ctx.db, ctx.auth.orgId, input.id);
    return pricedTools.pdfAnswer(ctx, {
      kind: 'invoice',
      id: row.id,
      number: row.number,
      status: serializeInvoice(row).status,
      filename: invoicePdfFilename(row),
      render: () => renderInvoicePdf(ctx.db, row, ctx.services.config.mailFrom),
    });
  },
});

/** The invoice tools in registry order, with create and update as built from the invoice-project hooks (index.ts). */
export function invoiceTools<C extends Tool, U extends Tool>(createInvoice: C, updateInvoice: U) {
  return [
    listInvoices,
    getInvoice,
    createInvoice,
    updateInvoice,
    deleteInvoice,
    finalizeInvoice,
    recordInvoicePayment,
    voidInvoice,
    markInvoiceUncollectible,
    sendInvoice,
    getInvoicePdf,
  ];
}
