import { z } from 'zod';
import type { Permission } from '../../core/access.ts';
import { confirmShape, sendResultShape } from '../../core/confirm.ts';
import { queuedMailSchema } from '../../core/mail-outbox.ts';
import { numberOrWordsMatch } from '../../core/records.ts';
import { fileOutputShape } from '../../core/route.ts';
import { dateString, pagedOutput } from '../../core/schemas.ts';
import { describeMoves } from '../../core/state-machine.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { documentIdShape, documentTools, pricedTools } from '../documents/document-tools.ts';
import { invoiceSchema } from '../invoices/store.ts';
import {
  estimatePdfFilename,
  previewSend,
  renderEstimatePdf,
  sendEstimate as sendByMail,
} from './delivery.ts';
import {
  acceptEstimate,
  convertToInvoice,
  declineEstimate,
  deleteDraft,
  ESTIMATE_STATUSES,
  estimateRecords,
  estimateSchema,
  estimateStatusMachine,
  insertEstimate,
  patchEstimate,
  serializeEstimate,
} from './store.ts';
import { estimates } from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Input fields

const fields = pricedTools.inputFields({
  noun: 'estimate',
  contactRole: 'address',
  dealRole: 'estimated',
  issuedBy: 'sending',
});
const validUntilField = dateString('Valid until')
  .nullable()
  .describe('Last day the estimate is valid (YYYY-MM-DD), not before issue_date; null clears it');

const estimateIdShape = documentIdShape('estimate');

const inputs = pricedTools.inputs({
  kind: 'estimate',
  fields,
  leadChange: 'Addresses another live lead; its contact and opportunity must then belong to it',
  createRefs: {},
  dated: { valid_until: validUntilField.optional() },
});

// ---------------------------------------------------------------------------------------------
// Tools

const FEATURE = 'estimates';
type EstimatePermission = Extract<Permission, `estimates.${string}`>;
/** Estimates are in the invoices scope family (read:invoices / write:invoices) and need the plan feature. */
const access = (kind: 'read' | 'write', permission: EstimatePermission) =>
  ({ kind, resource: 'invoices', permission, feature: FEATURE }) as const;

const MOVES = describeMoves(estimateStatusMachine);
const estimateTool = documentTools('estimate', estimateRecords, serializeEstimate, estimateSchema);

const listEstimates = estimateTool.list({
  title: 'List estimates',
  description:
    'Lists the estimates (quotes) of the organization, newest first, filtered by status, lead and issue date range; `search` matches the number and notes. Needs a plan with estimates.',
  sortFields: ['created_at', 'updated_at', 'issue_date', 'valid_until', 'total', 'number'],
  sortColumns: {
    ...pricedTools.sortColumns(estimates),
    valid_until: { column: estimates.validUntil, nullsLast: true },
    number: estimates.number,
  },
  statuses: ESTIMATE_STATUSES,
  own: pricedTools.issueDateRange('estimates'),
  output: pagedOutput('estimates', estimateSchema),
  access: access('read', 'estimates.view'),
  columns: estimates,
  filters: (input) => pricedTools.issueDateFilters(estimates.issueDate, input),
  match: (text) => numberOrWordsMatch(estimates.number, estimates.search, text),
  page: (db, input, query) => estimateRecords.list(db, 'estimates', serializeEstimate, input, query),
});

const getEstimate = estimateTool.get({
  title: 'Get an estimate',
  description:
    'Returns one estimate by id with its priced lines, totals, status dates and the invoice_id it was converted to. ' +
    'Find ids with list_estimates.',
  access: access('read', 'estimates.view'),
});

const createEstimate = estimateTool.create({
  title: 'Create an estimate',
  description:
    'Creates a draft estimate (quote) for a live lead with the next gap-free number (EST-000001). contact_id and opportunity_id must belong to the lead; valid_until not before issue_date. Returns it priced (line amounts, subtotal, tax_total, total). Send it with send_estimate.',
  input: inputs.create,
  access: access('write', 'estimates.create'),
  create: insertEstimate,
});

const updateEstimate = estimateTool.update({
  title: 'Update a draft estimate',
  description:
    'Changes only the fields sent of a draft estimate and returns it; a field sent as null is cleared, line_items ' +
    'replaces every line. A sent, accepted, declined or expired estimate is frozen: 400 invalid_transition.',
  input: inputs.update,
  access: access('write', 'estimates.edit'),
  update: patchEstimate,
});

const deleteEstimate = estimateTool.remove({
  label: 'Estimate',
  description:
    'Deletes a draft estimate for good (its number is not reused). An estimate that was sent is never deleted ' +
    '(400 invalid_transition): decline it or let it expire.',
  access: access('write', 'estimates.delete'),
  deleteDraft,
});

export const sendEstimate = defineTool({
  name: 'send_estimate',
  title: 'Send an estimate',
  description: `E-mails the estimate as a PDF to \`to\`, else to the estimate's contact, else the lead's first contact with an e-mail (none: 400 naming \`to\`); a draft becomes sent. Each call sends a new mail. The moves: ${MOVES}.`,
  input: z.strictObject({
    ...estimateIdShape,
    to: z
      .email('must be an email address')
      .max(254)
      .optional()
      .describe(
        "Recipient e-mail address; default the estimate's contact's (or the lead's first contact's) e-mail",
      ),
    message: z
      .string()
      .trim()
      .min(1)
      .max(5000)
      .refine(NO_NUL, nulMessage)
      .optional()
      .describe('A short message above the estimate in the mail, 1-5000 characters'),
    ...confirmShape,
  }),
  output: z.object({
    ...sendResultShape,
    estimate: estimateSchema.optional().describe('The estimate after sending (absent in a preview)'),
    mail: queuedMailSchema.optional(),
  }),
  access: access('write', 'estimates.edit'),
  errors: [
    { code: 'invalid_transition', when: 'the estimate is accepted, declined or expired' },
    { code: 'validation_failed', when: 'no `to` is given and no contact of the lead has an e-mail address' },
  ],
  annotations: { openWorldHint: true, idempotentHint: false },
  toolset: 'billing',
  sends: {
    async preview(input, ctx) {
      const { id, ...send } = input;
      const { preview } = await previewSend(ctx, id, send);
      return pricedTools.sendPreview(ctx, {
        action: `E-mail estimate ${preview.number} as a PDF to ${preview.to}`,
        to: preview.to,
        subject: preview.subject,
        amounts: [{ label: 'total', amount: preview.total, currency: preview.currency }],
        attachments: [estimatePdfFilename(preview)],
        details: pricedTools.messageDetails(send.message),
      });
    },
  },
  async handler(input, ctx) {
    const { id, ...send } = input;
    const { estimate, mail } = await sendByMail(ctx, id, send);
    return { sent: true, estimate, mail };
  },
});

export const acceptEstimateTool = estimateTool.move({
  name: 'accept_estimate',
  title: 'Accept an estimate',
  description:
    'Records that the customer accepted a sent estimate (accepted_at now); convert it with convert_estimate_to_invoice. ' +
    `Accepting it again returns it unchanged. The moves: ${MOVES}.`,
  access: access('write', 'estimates.edit'),
  errors: [{ code: 'invalid_transition', when: 'the estimate is not sent (draft, declined or expired)' }],
  annotations: { idempotentHint: true },
  move: acceptEstimate,
});

export const declineEstimateTool = defineTool({
  name: 'decline_estimate',
  title: 'Decline an estimate',
  description:
    'Records that the customer declined a sent estimate (declined_at now) with an optional `reason`. Declining it again ' +
    'returns it unchanged. Any state but sent is a 400 invalid_transition.',
  input: z.strictObject({
    ...estimateIdShape,
    reason: z
      .string()
      .trim()
      .min(1)
      .max(2000)
      .refine(NO_NUL, nulMessage)
      .optional()
      .describe('Why the customer declined, 1-2000 characters'),
  }),
  output: estimateTool.output,
  access: access('write', 'estimates.edit'),
  errors: [{ code: 'invalid_transition', when: 'the estimate is not sent (draft, accepted or expired)' }],
  annotations: { idempotentHint: true },
  toolset: 'billing',
  async handler(input, ctx) {
    return { estimate: await declineEstimate(ctx, input.id, input.reason) };
  },
});

export const convertEstimateToInvoice = defineTool({
  name: 'convert_estimate_to_invoice',
  title: 'Convert an estimate to an invoice',
  description:
    'Turns an accepted estimate into a draft invoice with the same lead, contact, opportunity, currency, lines and ' +
    'notes (invoice.created) and returns {invoice}; the estimate keeps its invoice_id. Once only: a second call is a ' +
    '400 naming invoice_id. Finalize the invoice with finalize_invoice.',
  input: z.strictObject(estimateIdShape),
  output: z.object({ invoice: invoiceSchema }),
  access: access('write', 'estimates.edit'),
  errors: [
    { code: 'invalid_transition', when: 'the estimate is not accepted' },
    { code: 'invalid_operation', when: 'the estimate was already converted' },
  ],
  toolset: 'billing',
  async handler(input, ctx) {
    return { invoice: await convertToInvoice(ctx, input.id) };
  },
});

export const getEstimatePdf = defineTool({
  name: 'get_estimate_pdf',
  title: 'Get the PDF of an estimate',
  description:
    'The estimate as a PDF (number, status, dates, lines, totals, notes). Over REST, GET /api/v1/estimates/{id}/pdf ' +
    'answers the file itself (application/pdf, attachment). Here it returns a summary: the file name, size and the ' +
    'download path; use send_estimate to e-mail it.',
  input: z.strictObject(estimateIdShape),
  output: z.object({
    ...fileOutputShape,
    number: z.string().describe('The estimate number printed on the PDF'),
    status: z.enum(ESTIMATE_STATUSES).describe('The estimate status printed on the PDF'),
    download_path: z.string().describe('REST path answering the PDF: /api/v1/estimates/{id}/pdf'),
  }),
  access: access('read', 'estimates.view'),
  toolset: 'billing',
  async handler(input, ctx) {
    const row = await estimateRecords.getLive(ctx.db, ctx.auth.orgId, input.id);
    return pricedTools.pdfAnswer(ctx, {
      kind: 'estimate',
      id: row.id,
      number: row.number,
      status: serializeEstimate(row).status,
      filename: estimatePdfFilename(row),
      render: () => renderEstimatePdf(ctx.db, row, ctx.services.config.mailFrom),
    });
  },
});

export const estimateTools = [
  listEstimates,
  getEstimate,
  createEstimate,
  updateEstimate,
  deleteEstimate,
  sendEstimate,
  acceptEstimateTool,
  declineEstimateTool,
  convertEstimateToInvoice,
  getEstimatePdf,
];
