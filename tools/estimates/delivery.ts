import type { Executor } from '../../core/db/client.ts';
import { validationError } from '../../core/errors.ts';
import { safeSubject } from '../../core/mail.ts';
import { type QueuedMail, queueMail, wakeMail } from '../../core/mail-outbox.ts';
import { organizationName } from '../../core/organizations.ts';
import { formatAmount, type PdfDocumentInput, renderDocumentPdf } from '../../core/pdf.ts';
import type { ToolContext } from '../../core/tool.ts';
import { mailableContact } from '../contacts/store.ts';
import { documentDelivery, documentParties, documentSender } from '../invoices/parties.ts';
import { type EstimateData, type EstimateRecord, lockForMove, markSent, serializeEstimate } from './store.ts';

/** The file name of an estimate's PDF: its number. */
export function estimatePdfFilename(row: Pick<EstimateData, 'number'>): string {
  return `${row.number}.pdf`;
}

/** What the PDF prints of an estimate: the organization as seller, the lead (and contact) as buyer. */
export async function estimatePdfInput(
  db: Executor,
  row: EstimateData,
  mailFrom: string,
): Promise<PdfDocumentInput> {
  const { seller, buyer } = await documentParties(db, row, mailFrom);
  const record = serializeEstimate(row);
  const dates: PdfDocumentInput['dates'] = [];
  if (record.issue_date) dates.push({ label: 'Issue date', value: record.issue_date });
  if (record.valid_until) dates.push({ label: 'Valid until', value: record.valid_until });
  return {
    title: 'Estimate',
    number: record.number,
    status: record.status,
    seller,
    buyer,
    dates,
    currency: record.currency,
    lines: record.line_items,
    totals: [
      { label: 'Subtotal', amount: record.subtotal },
      { label: 'Tax', amount: record.tax_total },
      { label: 'Total', amount: record.total, emphasis: true },
    ],
    notes: record.notes,
    // Same estimate, same bytes.
    createdAt: row.createdAt,
  };
}

export async function renderEstimatePdf(db: Executor, row: EstimateData, mailFrom: string): Promise<Buffer> {
  return renderDocumentPdf(await estimatePdfInput(db, row, mailFrom));
}

export interface SendInput {
  to?: string | undefined;
  message?: string | undefined;
}

/** What a send mails (or, previewed, would mail). */
export interface SendPreview {
  to: string;
  subject: string;
  total: number;
  currency: string;
  number: string;
}

async function recipientOf(db: Executor, row: EstimateData, to: string | undefined): Promise<string> {
  if (to) return to;
  const contact = await mailableContact(db, row.orgId, row.leadId, row.contactId);
  if (contact) return contact.email;
  throw validationError([
    {
      field: 'to',
      message:
        "is required: neither the estimate's contact nor any contact of its lead has an e-mail address",
      code: 'required',
    },
  ]);
}

async function subjectOf(db: Executor, row: EstimateData): Promise<string> {
  const orgName = await organizationName(db, row.orgId);
  return safeSubject(`Estimate ${row.number}${orgName ? ` from ${orgName}` : ''}`);
}

/** The estimate (locked, allowed to move to sent) and what sending it mails. */
async function prepareSend(
  ctx: ToolContext,
  id: string,
  to: string | undefined,
): Promise<{ before: EstimateData; preview: SendPreview }> {
  const before = await lockForMove(ctx, id, 'sent');
  return {
    before,
    preview: {
      to: await recipientOf(ctx.db, before, to),
      subject: await subjectOf(ctx.db, before),
      total: serializeEstimate(before).total,
      currency: before.currency,
      number: before.number,
    },
  };
}

/** What a send would do, without doing it (MCP without confirm): refused moves are refused here too. */
export async function previewSend(
  ctx: ToolContext,
  id: string,
  input: SendInput,
): Promise<{ preview: SendPreview; estimate: EstimateRecord }> {
  const { before, preview } = await prepareSend(ctx, id, input.to);
  return { preview, estimate: serializeEstimate(before) };
}

function bodyText(record: EstimateRecord, message: string | undefined): string {
  const parts: string[] = [];
  if (message) parts.push(message.trim(), '');
  parts.push(
    `Please find attached estimate ${record.number} for ${formatAmount(record.total, record.currency)}.`,
  );
  if (record.valid_until) parts.push(`It is valid until ${record.valid_until}.`);
  return `${parts.join('\n')}\n`;
}

/**
 * Sends the estimate: draft -> sent (or a resend), renders the PDF, queues one mail (woken after the
 * commit) under `estimate:<id>:send:<n>`.
 */
export async function sendEstimate(
  ctx: ToolContext,
  id: string,
  input: SendInput,
): Promise<{
  preview: SendPreview;
  estimate: EstimateRecord;
  mail: QueuedMail;
}> {
  // The address is checked before the move, so a refused send leaves a draft a draft.
  const { before, preview } = await prepareSend(ctx, id, input.to);
  const row = await markSent(ctx, before);
  const record = serializeEstimate(row);
  const pdf = await renderEstimatePdf(ctx.db, row, ctx.services.config.mailFrom);
  // From the sender's own verified account, else system mail answered to them (invoices/parties.ts).
  const sender = await documentSender(ctx.db, ctx.auth.orgId, ctx.auth.userId);
  const mail = await queueMail(ctx.db, {
    orgId: ctx.auth.orgId,
    key: `estimate:${row.id}:send:${row.sendCount}`,
    subject: { type: 'estimate', id: row.id },
    accountId: sender.accountId,
    message: {
      to: preview.to,
      subject: preview.subject,
      ...(sender.replyTo ? { replyTo: sender.replyTo } : {}),
      text: bodyText(record, input.message),
      attachments: [{ filename: estimatePdfFilename(row), contentType: 'application/pdf', content: pdf }],
    },
  });
  const services = ctx.services;
  ctx.afterCommit(() => wakeMail(services, mail.id));
  return {
    preview,
    estimate: record,
    mail: {
      id: mail.id,
      to: preview.to,
      subject: preview.subject,
      delivery: documentDelivery(sender, ctx.services.mailer.delivery),
    },
  };
}
