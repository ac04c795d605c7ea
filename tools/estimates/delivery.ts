// Estimate delivery on the document kit (tools/documents/send.ts): the PDF, and sending it by mail
// (draft -> sent, or a resend) under the kit's key `estimate:<id>:send:<n>`.
import type { Executor } from '../../core/db/client.ts';
import type { QueuedMail } from '../../core/mail-outbox.ts';
import { formatAmount, type PdfDocumentInput } from '../../core/pdf.ts';
import type { ToolContext } from '../../core/tool.ts';
import {
  type DocumentSendInput,
  documentMailText,
  documentRecipient,
  documentSubject,
  documentTotalRows,
  queueDocumentMail,
  renderDocument,
} from '../documents/send.ts';
import { type EstimateData, type EstimateRecord, lockForMove, markSent, serializeEstimate } from './store.ts';

/** The file name of an estimate's PDF: its number. */
export function estimatePdfFilename(row: Pick<EstimateData, 'number'>): string {
  return `${row.number}.pdf`;
}

/** The PDF of an estimate: the organization as seller, the lead (and contact) as buyer. */
export function renderEstimatePdf(db: Executor, row: EstimateData, mailFrom: string): Promise<Buffer> {
  const record = serializeEstimate(row);
  const dates: PdfDocumentInput['dates'] = [];
  if (record.issue_date) dates.push({ label: 'Issue date', value: record.issue_date });
  if (record.valid_until) dates.push({ label: 'Valid until', value: record.valid_until });
  return renderDocument(db, row, mailFrom, {
    title: 'Estimate',
    number: record.number,
    status: record.status,
    dates,
    currency: record.currency,
    lines: record.line_items,
    totals: documentTotalRows(record),
    notes: record.notes,
    // Same estimate, same bytes.
    createdAt: row.createdAt,
  });
}

/** What a send mails (or, previewed, would mail). */
export interface SendPreview {
  to: string;
  subject: string;
  total: number;
  currency: string;
  number: string;
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
      to: await documentRecipient(ctx.db, before, to, 'estimate'),
      subject: await documentSubject(ctx.db, before.orgId, `Estimate ${before.number}`),
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
  input: DocumentSendInput,
): Promise<{ preview: SendPreview; estimate: EstimateRecord }> {
  const { before, preview } = await prepareSend(ctx, id, input.to);
  return { preview, estimate: serializeEstimate(before) };
}

function bodyText(record: EstimateRecord, message: string | undefined): string {
  const lines = [
    `Please find attached estimate ${record.number} for ${formatAmount(record.total, record.currency)}.`,
  ];
  if (record.valid_until) lines.push(`It is valid until ${record.valid_until}.`);
  return documentMailText(message, lines);
}

/** Sends the estimate: draft -> sent (or a resend), renders the PDF, queues one mail. */
export async function sendEstimate(
  ctx: ToolContext,
  id: string,
  input: DocumentSendInput,
): Promise<{
  preview: SendPreview;
  estimate: EstimateRecord;
  mail: QueuedMail;
}> {
  // The address is checked before the move, so a refused send leaves a draft a draft.
  const { before, preview } = await prepareSend(ctx, id, input.to);
  const row = await markSent(ctx, before);
  const record = serializeEstimate(row);
  const mail = await queueDocumentMail(ctx, {
    kind: 'estimate',
    id: row.id,
    sendNumber: row.sendCount,
    to: preview.to,
    subject: preview.subject,
    text: bodyText(record, input.message),
    pdf: {
      filename: estimatePdfFilename(row),
      content: await renderEstimatePdf(ctx.db, row, ctx.services.config.mailFrom),
    },
  });
  return { preview, estimate: record, mail };
}
