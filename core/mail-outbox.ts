// The mail outbox: outgoing document mail (an invoice sent with its PDF, an estimate, a proposal's
// link) that is sent exactly once and survives restarts, through the system mailer or through the
// sending user's connected account (the row's `account_id`; the transport is chosen by the worker). "The database is the truth, the queue a
// wake-up" (core/jobs.ts): a tool writes the message as an `outgoing_mails` row in the transaction
// that decides to send it (queueMail), wakes the 'mail.send' job after the commit (wakeMail), and
// the job (core/mail-send.ts) claims the row, sends it through services.mailer and records the
// outcome. A sweeper (workers/runtime.ts) re-wakes rows that are due but whose job was lost.
//
// Exactly once:
// - queueing: the caller's idempotency key is unique per organization; queueing the same key again
//   returns the existing row and adds nothing (a retried request, a retried job);
// - sending: the job claims the row in one UPDATE (queued and due -> sending, attempts + 1, a lease
//   until `next_attempt_at`), so two jobs for one row never both send; it records the outcome only
//   while its claim still holds (same attempt number), and a crashed worker's claim is taken over
//   once the lease expires.
// - The one window no database can close: the SMTP server accepted the message and the worker died
//   before marking the row sent. The lease then expires and the message is sent again. Its
//   Message-ID is derived from the row id (`<outgoing-mail-<id>@<sender domain>>`), the same on
//   every attempt, so receiving systems and mail clients recognise the copy (and the `.eml` store
//   writes nothing the second time). docs/decisions.md "Mail outbox".
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from './db/client.ts';
import { outgoingMails, type StoredMailAttachment, type StoredMailMessage } from './db/schema.ts';
import { newId } from './ids.ts';
import { MAIL_DELIVERIES, type MailMessage, parseMailMessage, parseSenderAddress } from './mail.ts';
import type { Services } from './services.ts';

export const OUTGOING_MAIL_STATUSES = ['queued', 'sending', 'sent', 'failed'] as const;
export type OutgoingMailStatus = (typeof OUTGOING_MAIL_STATUSES)[number];

export const sendMailPayload = z.object({
  id: z.string().describe('The outgoing_mails row to send'),
});

declare module './jobs.ts' {
  interface JobCatalog {
    /** Send one queued outgoing mail (core/mail-outbox.ts), if it is still due. */
    'mail.send': z.output<typeof sendMailPayload>;
  }
}

export interface QueueMailInput {
  orgId: string;
  /** Idempotency key, unique per organization: the same key -> the existing row, nothing new. */
  key: string;
  /** What the mail is about, e.g. { type: 'invoice', id }. */
  subject: { type: string; id: string };
  /** core/mail.ts shape, attachments with Buffer content. A `messageId` given here is ignored. */
  message: MailMessage;
  /**
   * The connected account to send through (the sending user's own, verified); absent or null: the
   * system mailer. The worker (core/mail-send.ts) falls back to the system mailer, Reply-To the
   * account's address, when the account is gone or no longer verified at send time.
   */
  accountId?: string | null | undefined;
}

/** The stored form of a message: everything but the attachments (kept apart, in base64). */
function storedMessage(message: MailMessage): {
  message: StoredMailMessage;
  attachments: StoredMailAttachment[];
} {
  const m = parseMailMessage(message);
  const stored: StoredMailMessage = { to: m.to, subject: m.subject };
  if (m.cc !== undefined) stored.cc = m.cc;
  if (m.bcc !== undefined) stored.bcc = m.bcc;
  if (m.replyTo !== undefined) stored.replyTo = m.replyTo;
  if (m.text !== undefined) stored.text = m.text;
  if (m.html !== undefined) stored.html = m.html;
  if (m.headers !== undefined) stored.headers = m.headers;
  const attachments = (m.attachments ?? []).map((a) => ({
    filename: a.filename,
    content_type: a.contentType,
    content: a.content.toString('base64'),
  }));
  return { message: stored, attachments };
}

/**
 * Writes the mail as a queued row in the caller's transaction (a tenant transaction: the row is the
 * organization's). `created: false` when a row with this key already existed: nothing was added.
 * Throws a plain Error for an invalid message (a programming error: tools validate input first).
 */
export async function queueMail(
  tx: Executor,
  input: QueueMailInput,
): Promise<{ id: string; created: boolean }> {
  const { message, attachments } = storedMessage(input.message);
  const id = newId();
  const inserted = await tx
    .insert(outgoingMails)
    .values({
      id,
      orgId: input.orgId,
      key: input.key,
      subjectType: input.subject.type,
      subjectId: input.subject.id,
      accountId: input.accountId ?? null,
      status: 'queued',
      message,
      attachments,
      nextAttemptAt: new Date(),
    })
    .onConflictDoNothing({ target: [outgoingMails.orgId, outgoingMails.key] })
    .returning({ id: outgoingMails.id });
  if (inserted[0]) return { id: inserted[0].id, created: true };
  const [existing] = await tx
    .select({ id: outgoingMails.id })
    .from(outgoingMails)
    .where(and(eq(outgoingMails.orgId, input.orgId), eq(outgoingMails.key, input.key)));
  if (!existing) throw new Error(`outgoing mail ${input.key} neither inserted nor found`);
  return { id: existing.id, created: false };
}

/** The job id of the attempt a row is due for: the row id for the first, `<id>:<n>` after. */
export function mailJobId(id: string, attemptsMade: number): string {
  return attemptsMade === 0 ? id : `${id}:${attemptsMade + 1}`;
}

/**
 * Enqueues the 'mail.send' job of a queued row. Call it after the commit (a tool's afterCommit): a
 * job that ran before would not see the row. A failure to enqueue is harmless: the sweeper finds
 * the due row.
 */
export async function wakeMail(services: Services, id: string): Promise<void> {
  await services.jobs.enqueue('mail.send', { id }, { jobId: mailJobId(id, 0) });
}

/** The Message-ID of a row's mail, the same on every attempt: `<outgoing-mail-<id>@<sender domain>>`. */
export function outgoingMessageId(id: string, from: string): string {
  const domain = parseSenderAddress(from)?.address.split('@')[1] ?? 'localhost';
  return `<outgoing-mail-${id}@${domain}>`;
}

/** The stored message back in core/mail.ts's shape, with its stable Message-ID. */
export function mailOfRow(
  row: { id: string; message: StoredMailMessage; attachments: StoredMailAttachment[] },
  from: string,
): MailMessage {
  return {
    ...(row.message as MailMessage),
    attachments: row.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.content_type,
      content: Buffer.from(a.content, 'base64'),
    })),
    messageId: outgoingMessageId(row.id, from),
  };
}

/** The mail a send queued, as a send's answer reports it (send_invoice, send_estimate). */
export const queuedMailSchema = z
  .object({
    id: z.string().describe('Id of the queued mail'),
    to: z.string().describe('Recipient'),
    subject: z.string().describe('Subject line'),
    delivery: z
      .enum(MAIL_DELIVERIES)
      .describe(
        'smtp: handed to the SMTP server; file: SMTP_URL is not set, so the mail is only written under DATA_DIR/mail and does not reach the recipient',
      ),
  })
  .describe('The mail queued (absent in a preview); it is sent in the background, once');

export type QueuedMail = z.output<typeof queuedMailSchema>;

/** An outgoing mail as the areas show it (e.g. in a send's answer or a document's deliveries). */
export interface OutgoingMailSummary {
  id: string;
  status: OutgoingMailStatus;
  attempts: number;
  last_error: string | null;
  sent_at: string | null;
}

/** The mails queued about one record, oldest first (tenant transaction). */
export async function mailsAbout(
  tx: Executor,
  orgId: string,
  subject: { type: string; id: string },
): Promise<OutgoingMailSummary[]> {
  const rows = await tx
    .select()
    .from(outgoingMails)
    .where(
      and(
        eq(outgoingMails.orgId, orgId),
        eq(outgoingMails.subjectType, subject.type),
        eq(outgoingMails.subjectId, subject.id),
      ),
    )
    .orderBy(outgoingMails.createdAt, outgoingMails.id);
  return rows.map((row) => ({
    id: row.id,
    status: OUTGOING_MAIL_STATUSES.find((s) => s === row.status) ?? 'queued',
    attempts: row.attempts,
    last_error: row.lastError,
    sent_at: row.sentAt?.toISOString() ?? null,
  }));
}
