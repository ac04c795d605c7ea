// The document kit's send flow, one shape for invoices, estimates and proposals: the recipient
// (`to`, else the document's contact with an e-mail, else the lead's oldest), the subject, the body
// text, the PDF as the buyer sees it, and the mail queued through the outbox (core/mail-outbox.ts)
// in the send's own transaction under ONE key scheme, `<kind>:<id>:send:<n>` (n counts the sends,
// so a resend is a new mail and a retried job is not), woken after the commit. It leaves from the
// sender's own verified connected account when they have one (parties.ts documentSender).
import type { Executor } from '../../core/db/client.ts';
import { validationError } from '../../core/errors.ts';
import type { PricedLine } from '../../core/line-items.ts';
import { safeSubject } from '../../core/mail.ts';
import { type QueuedMail, queueMail, wakeMail } from '../../core/mail-outbox.ts';
import { organizationName } from '../../core/organizations.ts';
import { formatAmount, type PdfDocumentInput, renderDocumentPdf } from '../../core/pdf.ts';
import type { ToolContext } from '../../core/tool.ts';
import { mailableContact } from '../contacts/store.ts';
import { type DocumentRef, documentDelivery, documentParties, documentSender } from './parties.ts';

/** What a caller sends with: the recipient (else the document's contact) and a message of their own. */
export interface DocumentSendInput {
  to?: string | undefined;
  message?: string | undefined;
}

/** The kinds of document sent by mail: the outbox subject type and the first part of its key. */
export type DocumentKind = 'invoice' | 'estimate' | 'proposal';

/**
 * The address a send goes to: `to`, else the document's contact (when it names one) or the lead's
 * oldest contact with an e-mail; none is a 400 naming `to`. A document without a contact field
 * (a proposal) passes `contactId: undefined`.
 */
export async function documentRecipient(
  db: Executor,
  doc: { orgId: string; leadId: string; contactId: string | null | undefined },
  to: string | undefined,
  noun: string,
): Promise<string> {
  if (to) return to;
  const contact = await mailableContact(db, doc.orgId, doc.leadId, doc.contactId);
  if (contact) return contact.email;
  const message =
    doc.contactId === undefined
      ? "is required: none of the lead's contacts has an e-mail address"
      : `is required: neither the ${noun}'s contact nor any contact of its lead has an e-mail address`;
  throw validationError([{ field: 'to', message, code: 'required' }]);
}

/** `<title> from <organization>` (the organization's name when it has one), safe as a header. */
async function documentSubject(db: Executor, orgId: string, title: string): Promise<string> {
  const orgName = await organizationName(db, orgId);
  return safeSubject(`${title}${orgName ? ` from ${orgName}` : ''}`);
}

/** The body: the sender's own message first when there is one, then the document's lines. */
function documentMailText(message: string | undefined, lines: readonly string[]): string {
  const parts: string[] = [];
  if (message) parts.push(message.trim(), '');
  parts.push(...lines);
  return `${parts.join('\n')}\n`;
}

/** The body of a document mailed as a PDF: the line naming it and its total first, then `more`. */
function attachedDocumentText(
  message: string | undefined,
  doc: { noun: string; number: string | null; total: number; currency: string },
  more: readonly string[],
): string {
  const first = `Please find attached ${doc.noun} ${doc.number} for ${formatAmount(doc.total, doc.currency)}.`;
  return documentMailText(message, [first, ...more]);
}

/** What the PDF of a priced document (an invoice, an estimate) prints of its record. */
interface PricedRecord {
  number: string | null;
  issue_date: string | null;
  status: string;
  currency: string;
  line_items: readonly PricedLine[];
  subtotal: number;
  tax_total: number;
  total: number;
  notes: string | null;
}

/**
 * The PDF of a priced document: its number, status, lines, notes and totals (subtotal, tax, the
 * emphasised total, then `moreTotals`), its issue date then its own `dates` (a null value is left
 * out), dated
 * `createdAt` so the same document gives the same bytes.
 */
function renderPricedDocument(
  db: Executor,
  doc: DocumentRef,
  mailFrom: string,
  pdf: {
    title: PdfDocumentInput['title'];
    record: PricedRecord;
    dates: ReadonlyArray<readonly [label: string, value: string | null]>;
    moreTotals?: PdfDocumentInput['totals'];
    createdAt: Date;
  },
): Promise<Buffer> {
  const { record } = pdf;
  return renderDocument(db, doc, mailFrom, {
    title: pdf.title,
    number: record.number,
    status: record.status,
    dates: [['Issue date', record.issue_date] as const, ...pdf.dates].flatMap(([label, value]) =>
      value ? [{ label, value }] : [],
    ),
    currency: record.currency,
    lines: record.line_items,
    totals: [
      { label: 'Subtotal', amount: record.subtotal },
      { label: 'Tax', amount: record.tax_total },
      { label: 'Total', amount: record.total, emphasis: true },
      ...(pdf.moreTotals ?? []),
    ],
    notes: record.notes,
    createdAt: pdf.createdAt,
  });
}

/** The PDF of a document: the organization as seller, the lead (and contact) as buyer. */
async function renderDocument(
  db: Executor,
  doc: DocumentRef,
  mailFrom: string,
  body: Omit<PdfDocumentInput, 'seller' | 'buyer'>,
): Promise<Buffer> {
  return renderDocumentPdf(await documentPdfInput(db, doc, mailFrom, body));
}

/** What the PDF prints: `body` with the parties of the document. */
async function documentPdfInput(
  db: Executor,
  doc: DocumentRef,
  mailFrom: string,
  body: Omit<PdfDocumentInput, 'seller' | 'buyer'>,
): Promise<PdfDocumentInput> {
  const { seller, buyer } = await documentParties(db, doc, mailFrom);
  return { ...body, seller, buyer };
}

export interface DocumentMail {
  kind: DocumentKind;
  id: string;
  /** Which send this is (1 for the first): the n of the key `<kind>:<id>:send:<n>`. */
  sendNumber: number;
  to: string;
  subject: string;
  text: string;
  /** The PDF, when the document travels as one (a proposal travels as a link in the text). */
  pdf?: { filename: string; content: Buffer } | undefined;
}

/** Queues the mail of one send and wakes it after the commit; returns it as a send answers it. */
export async function queueDocumentMail(ctx: ToolContext, mail: DocumentMail): Promise<QueuedMail> {
  const sender = await documentSender(ctx.db, ctx.auth.orgId, ctx.auth.userId);
  const queued = await queueMail(ctx.db, {
    orgId: ctx.auth.orgId,
    key: `${mail.kind}:${mail.id}:send:${mail.sendNumber}`,
    subject: { type: mail.kind, id: mail.id },
    accountId: sender.accountId,
    message: {
      to: mail.to,
      subject: mail.subject,
      ...(sender.replyTo ? { replyTo: sender.replyTo } : {}),
      text: mail.text,
      ...(mail.pdf
        ? {
            attachments: [
              { filename: mail.pdf.filename, contentType: 'application/pdf', content: mail.pdf.content },
            ],
          }
        : {}),
    },
  });
  const services = ctx.services;
  ctx.afterCommit(() => wakeMail(services, queued.id));
  return {
    id: queued.id,
    to: mail.to,
    subject: mail.subject,
    delivery: documentDelivery(sender, services.mailer.delivery),
  };
}

/**
 * What an invoice's and an estimate's delivery take of the kit, as one face: the recipient, the
 * subject, the body naming the attached document, its PDF and the queued mail.
 */
export const pricedDelivery = {
  recipient: documentRecipient,
  subject: documentSubject,
  text: attachedDocumentText,
  render: renderPricedDocument,
  queue: queueDocumentMail,
};
