// Estimate delivery on the document kit (tools/documents/send.ts): the PDF, and sending it by mail
// (draft -> sent, or a resend) under the kit's key `estimate:<id>:send:<n>`.
import type { Executor } from '../../core/db/client.ts';
import type { QueuedMail } from '../../core/mail-outbox.ts';
import type { ToolContext } from '../../core/tool.ts';
import { type DocumentSendInput, pricedDelivery } from '../documents/send.ts';
import { type EstimateData, type EstimateRecord, lockForMove, markSent, serializeEstimate } from './store.ts';

/** The file name of an estimate's PDF: its number. */
export function estimatePdfFilename(row: Pick<EstimateData, 'number'>): string {
  return `${row.number}.pdf`;
}

/** The PDF of an estimate: the organization as seller, the lead (and contact) as buyer. */
export function renderEstimatePdf(db: Executor, row: EstimateData, mailFrom: string): Promise<Buffer> {
  const record = serializeEstimate(row);
  return pricedDelivery.render(db, row, mailFrom, {
    title: 'Estimate',
    record,
    dates: [['Valid until', record.valid_until]],
    // Same estimate, same bytes.
    createdAt: row.createdAt,
  });
}

/** The PDF as a file: named by its number. */
async function estimatePdfFile(
  db: Executor,
  row: EstimateData,
  mailFrom: string,
): Promise<{ filename: string; content: Buffer }> {
  return { filename: estimatePdfFilename(row), content: await renderEstimatePdf(db, row, mailFrom) };
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
      to: await pricedDelivery.recipient(ctx.db, before, to, 'estimate'),
      subject: await pricedDelivery.subject(ctx.db, before.orgId, `Estimate ${before.number}`),
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
  const mail = await pricedDelivery.queue(ctx, {
    kind: 'estimate',
    id: row.id,
    sendNumber: row.sendCount,
    to: preview.to,
    subject: preview.subject,
    text: pricedDelivery.text(input.message, { noun: 'estimate', ...record }, validityLines(record)),
    pdf: await estimatePdfFile(ctx.db, row, ctx.services.config.mailFrom),
  });
  return { preview, estimate: record, mail };
}

/** What the mail says of the estimate's validity. */
function validityLines(record: EstimateRecord): string[] {
  return record.valid_until ? [`It is valid until ${record.valid_until}.`] : [];
}
