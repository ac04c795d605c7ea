// Invoice delivery: the PDF (core/pdf.ts), sending it by mail through the outbox
// (core/mail-outbox.ts) and the daily overdue flag. docs/billing.md "Invoice delivery":
// - POST /invoices/{id}/send finalizes a draft (the same numbering path as finalize), renders the
//   PDF, queues ONE mail under the key `invoice:<id>:send:<n>` (n counts the sends, so a resend is
//   a new mail and a retried job is not), sets `sent_at` and emits `invoice.sent`. Draft, open and
//   uncollectible invoices may be sent (an uncollectible one still takes payments); paid and void
//   ones may not (400 invalid_transition).
// - The recipient is `to`, else the first e-mail of the invoice's contact, else the first e-mail of
//   the lead's oldest live contact that has one; none -> 400 naming `to`.
// - The mail leaves from the sending user's verified connected account when they have one, else as
//   system mail with their address as Reply-To (tools/documents/parties.ts documentSender).
// - The overdue job flags open invoices whose due date is before today (UTC): `is_overdue` and one
//   `invoice.overdue` each; the flag means "open and past due", so paying, voiding or writing off
//   an invoice clears it (store.ts).
import { and, eq, getTableColumns, isNull, lt } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { recordEvent } from '../../core/events.ts';
import type { QueuedMail } from '../../core/mail-outbox.ts';
import { formatAmount } from '../../core/pdf.ts';
import type { ToolContext } from '../../core/tool.ts';
import { type DocumentSendInput, pricedDelivery } from '../documents/send.ts';
import {
  finalizeInvoice,
  type InvoiceData,
  type InvoiceRecord,
  invoiceRecords,
  invoiceStatusMachine,
  serializeInvoice,
  toStatus,
} from './store.ts';
import { invoices } from './tables.ts';

/** The states an invoice may be sent from. */
const SENDABLE = ['draft', 'open', 'uncollectible'] as const;

function assertSendable(row: InvoiceData): void {
  const from = toStatus(row.status);
  if ((SENDABLE as readonly string[]).includes(from)) return;
  invoiceStatusMachine.refuse(
    `${from} -> sent is not allowed; allowed: an invoice is sent from ${SENDABLE.join(', ')}`,
  );
}

/** The file name of an invoice's PDF: its number, or draft-<id> while it has none. */
export function invoicePdfFilename(row: Pick<InvoiceData, 'number' | 'id'>): string {
  return row.number ? `${row.number}.pdf` : `draft-${row.id}.pdf`;
}

/** The PDF of an invoice: what is paid and due after the totals; the kit adds the parties. */
export function renderInvoicePdf(db: Executor, row: InvoiceData, mailFrom: string): Promise<Buffer> {
  const record = serializeInvoice(row);
  return pricedDelivery.render(db, row, mailFrom, {
    title: 'Invoice',
    record,
    dates: [['Due date', record.due_date]],
    moreTotals: [
      { label: 'Paid', amount: record.amount_paid },
      { label: 'Amount due', amount: record.amount_due, emphasis: true },
    ],
    // Same invoice state, same bytes.
    createdAt: row.finalizedAt ?? row.createdAt,
  });
}

export interface SendPreview {
  to: string;
  subject: string;
  total: number;
  amount_due: number;
  currency: string;
  number: string | null;
}

function subjectOf(db: Executor, row: InvoiceData, number: string | null): Promise<string> {
  return pricedDelivery.subject(db, row.orgId, `Invoice ${number ?? '(number on sending)'}`);
}

/** What a send would do, without doing it: the recipient, subject and amounts (MCP without confirm). */
export async function previewSend(
  ctx: ToolContext,
  id: string,
  input: DocumentSendInput,
): Promise<SendPreview> {
  const row = await invoiceRecords.getLive(ctx.db, ctx.auth.orgId, id);
  assertSendable(row);
  const record = serializeInvoice(row);
  return {
    to: await pricedDelivery.recipient(ctx.db, row, input.to, 'invoice'),
    subject: await subjectOf(ctx.db, row, row.number),
    total: record.total,
    amount_due: record.amount_due,
    currency: record.currency,
    number: row.number,
  };
}

/** What the mail says of the payment: what is still due once part is paid, and by when. */
function paymentLines(record: InvoiceRecord): string[] {
  const lines: string[] = [];
  if (record.amount_paid > 0) lines.push(`Amount due: ${formatAmount(record.amount_due, record.currency)}.`);
  if (record.due_date) lines.push(`Payment is due by ${record.due_date}.`);
  return lines;
}

/**
 * Sends the invoice: finalizes a draft, renders the PDF, queues one mail (woken after the commit),
 * sets sent_at and emits invoice.sent.
 */
export async function sendInvoice(
  ctx: ToolContext,
  id: string,
  input: DocumentSendInput,
): Promise<{ invoice: InvoiceRecord; mail: QueuedMail }> {
  const before = await invoiceRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  assertSendable(before);
  // The address is checked before finalizing, so a refused send leaves the draft a draft.
  const to = await pricedDelivery.recipient(ctx.db, before, input.to, 'invoice');
  if (before.status === 'draft') await finalizeInvoice(ctx, id);
  const current = await invoiceRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const sends = current.sendCount + 1;
  const row = await invoiceRecords.write(ctx.db, ctx.auth.orgId, id, {
    sentAt: ctx.now,
    sendCount: sends,
    updatedAt: ctx.now,
  });
  const record = serializeInvoice(row);
  const { mailFrom } = ctx.services.config;
  const mail = await pricedDelivery.queue(ctx, {
    kind: 'invoice',
    id,
    sendNumber: sends,
    to,
    subject: await subjectOf(ctx.db, row, row.number),
    text: pricedDelivery.text(input.message, { noun: 'invoice', ...record }, paymentLines(record)),
    pdf: { filename: invoicePdfFilename(row), content: await renderInvoicePdf(ctx.db, row, mailFrom) },
  });
  await ctx.emit('invoice.sent', { ...record, sent_to: to, mail_id: mail.id });
  return { invoice: record, mail };
}

// ---------------------------------------------------------------------------------------------
// Overdue

/** The UTC calendar day of an instant, YYYY-MM-DD. */
function utcDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

const overdueConditions = (today: string, orgId?: string) =>
  and(
    orgId === undefined ? undefined : eq(invoices.orgId, orgId),
    eq(invoices.status, 'open'),
    eq(invoices.isOverdue, false),
    isNull(invoices.deletedAt),
    lt(invoices.dueDate, today),
  );

/**
 * Flags every open invoice of every organization (or of `orgId`) whose due date is before `now`'s
 * UTC day and that is not flagged yet, and emits one invoice.overdue for each, in one transaction:
 * the flag is set and the event recorded together, so a rerun finds nothing new. Returns how many.
 */
export async function flagOverdueInvoices(
  db: { transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> },
  now: Date,
  orgId?: string,
): Promise<number> {
  const today = utcDate(now);
  return db.transaction(async (tx) => {
    const { search: _search, ...columns } = getTableColumns(invoices);
    const flagged = await tx
      .update(invoices)
      .set({ isOverdue: true, updatedAt: now })
      .where(overdueConditions(today, orgId))
      .returning(columns);
    for (const row of flagged) {
      await recordEvent(tx, row.orgId, 'invoice.overdue', { ...serializeInvoice(row), today });
    }
    return flagged.length;
  });
}
