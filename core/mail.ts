// The mail port: system mail (password resets, invoices and proposals sent without a connected
// account). Callers hand a validated message to a Mailer; which one runs is a deployment choice
// (core/services.ts): SMTP (providers/smtp-mailer.ts) when SMTP_URL is set, otherwise the embedded
// default below, which writes each message as an RFC 5322 `.eml` file under DATA_DIR/mail so a
// developer can open what would have been sent. Both compose the message with nodemailer, so the
// bytes on disk are the bytes an SMTP server would receive.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { access, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTransport } from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser';
import type { Options as ComposeOptions } from 'nodemailer/lib/mailer';
import { z } from 'zod';

/** Control characters (CR and LF above all) would let a value start a header of its own. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * A subject built from record values (an organization's name, a proposal's title): control
 * characters, which the mail port refuses in a subject, become spaces.
 */
export function safeSubject(text: string): string {
  return [...text].map((ch) => (hasControlCharacter(ch) ? ' ' : ch)).join('');
}

/** Most SMTP servers refuse messages above 25 MB; attachments grow by a third in base64. */
const MAX_ATTACHMENT_BYTES = 18 * 1024 * 1024;

/** Headers the port composes itself; a caller setting them would contradict the message. */
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'message-id',
  'date',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
]);

const mailAddress = z.union([
  z.email().describe('A bare e-mail address'),
  z
    .object({
      name: z
        .string()
        .min(1)
        .max(200)
        .refine((s) => !hasControlCharacter(s), 'must not contain control characters')
        .describe('Display name'),
      address: z.email().describe('E-mail address'),
    })
    .describe('An address with a display name'),
]);

const recipients = z.union([mailAddress, z.array(mailAddress).min(1).max(50)]);

/** `<unique@domain>`, the form RFC 5322 gives a Message-ID. */
const MESSAGE_ID = /^<[^<>\s@]+@[^<>\s@]+>$/;

export const mailMessageSchema = z
  .object({
    to: recipients.describe('Recipients: one address or a list (at most 50)'),
    cc: recipients.optional().describe('Copy recipients'),
    bcc: recipients.optional().describe('Blind copy recipients (sent, never shown in the headers)'),
    replyTo: mailAddress.optional().describe('Where replies go, when not to the sender'),
    subject: z
      .string()
      .min(1)
      .max(998)
      .refine((s) => !hasControlCharacter(s), 'must not contain control characters')
      .describe('Subject line'),
    text: z.string().optional().describe('Plain-text body'),
    html: z.string().optional().describe('HTML body'),
    attachments: z
      .array(
        z.object({
          filename: z
            .string()
            .min(1)
            .max(255)
            .refine(
              (s) => !hasControlCharacter(s) && !/[/\\]/.test(s),
              'a file name without path or control characters',
            )
            .describe('File name shown to the recipient'),
          contentType: z
            .string()
            .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type such as application/pdf')
            .describe('MIME type'),
          content: z.instanceof(Buffer).describe('The file bytes'),
        }),
      )
      .max(20)
      .optional()
      .describe('Files attached to the message'),
    headers: z
      .record(
        z.string(),
        z
          .string()
          .max(998)
          .refine((s) => !hasControlCharacter(s), 'must not contain control characters'),
      )
      .superRefine((headers, ctx) => {
        // Checked here rather than as the record's key schema, whose failure hides the reason.
        for (const name of Object.keys(headers)) {
          if (!/^[A-Za-z0-9-]+$/.test(name)) {
            ctx.addIssue({ code: 'custom', path: [name], message: 'not a header name' });
          } else if (RESERVED_HEADERS.has(name.toLowerCase())) {
            ctx.addIssue({ code: 'custom', path: [name], message: 'a header the port sets itself' });
          }
        }
      })
      .optional()
      .describe('Extra headers (List-Unsubscribe, X-Entity-Ref-ID...)'),
    messageId: z
      .string()
      .max(250)
      .regex(MESSAGE_ID, 'a Message-ID of the form <unique@domain>')
      .optional()
      .describe(
        'The Message-ID to send under. A job that may run twice creates one with newMessageId() before its first attempt, stores it, and passes it on every attempt',
      ),
  })
  .refine((m) => m.text !== undefined || m.html !== undefined, {
    message: 'a message needs a text or an HTML body',
    path: ['text'],
  })
  .refine(
    (m) => (m.attachments ?? []).reduce((sum, a) => sum + a.content.length, 0) <= MAX_ATTACHMENT_BYTES,
    {
      message: `attachments exceed ${MAX_ATTACHMENT_BYTES} bytes in total`,
      path: ['attachments'],
    },
  );

export type MailMessage = z.input<typeof mailMessageSchema>;

export interface SentMail {
  /** The Message-ID the message went out with, `<...@...>`: the caller's when given. */
  messageId: string;
}

/**
 * Sends system mail. `send` validates the message (an invalid one throws, see parseMailMessage)
 * and resolves once the message is accepted: by the SMTP server, or written to disk by the
 * embedded default. A refused delivery throws AppError `mail_failed`.
 *
 * Never sent twice: a caller that retries (a job) passes the same `messageId` on every attempt.
 * The `.eml` store then keeps one file per Message-ID; over SMTP a retry after an unknown outcome
 * (a connection lost after the DATA was sent) may still deliver twice, and the shared Message-ID
 * is what lets receiving systems and mail clients recognise the copy as the same message.
 */
/**
 * Where system mail goes: `smtp` hands it to the SMTP_URL server; `file` (no SMTP_URL, the embedded
 * default) writes it under DATA_DIR/mail and nothing leaves the machine. Answers that report a
 * mail say which, so "sent" never hides a file nobody will read.
 */
export const MAIL_DELIVERIES = ['smtp', 'file'] as const;
export type MailDelivery = (typeof MAIL_DELIVERIES)[number];

export interface Mailer {
  readonly delivery: MailDelivery;
  send(message: MailMessage): Promise<SentMail>;
  /** Releases connections (SMTP); the embedded store holds none. */
  close(): Promise<void>;
}

/** Why a message is invalid, as one line: field paths and their problems. */
function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ');
}

/**
 * The message checked against the schema. A bad message is a programming error of the caller (the
 * tools validate user input before), so it throws a plain Error naming every problem.
 */
export function parseMailMessage(message: MailMessage): z.output<typeof mailMessageSchema> {
  const parsed = mailMessageSchema.safeParse(message);
  if (!parsed.success) throw new Error(`Invalid mail message: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/**
 * One sender address as MAIL_FROM gives it (`billing@example.com` or `Acme Billing
 * <billing@example.com>`), or null when the text is not exactly one valid address.
 */
export function parseSenderAddress(value: string): { name: string; address: string } | null {
  if (hasControlCharacter(value)) return null;
  const parsed = addressparser(value, { flatten: true });
  const only = parsed.length === 1 ? parsed[0] : undefined;
  if (!only || !z.email().safeParse(only.address).success) return null;
  return { name: only.name, address: only.address };
}

/** A fresh Message-ID in the sender's domain, for a caller that stores it before the first attempt. */
export function newMessageId(from: string): string {
  const domain = parseSenderAddress(from)?.address.split('@')[1] ?? 'localhost';
  return `<${randomUUID()}@${domain}>`;
}

/**
 * The message in nodemailer's terms, from the sender and with its Message-ID fixed, so both
 * adapters compose identical messages.
 */
export function composeMail(from: string, message: MailMessage): ComposeOptions & { messageId: string } {
  const m = parseMailMessage(message);
  return {
    from,
    to: m.to,
    cc: m.cc,
    bcc: m.bcc,
    replyTo: m.replyTo,
    subject: m.subject,
    text: m.text,
    html: m.html,
    headers: m.headers,
    attachments: m.attachments?.map((a) => ({
      filename: a.filename,
      contentType: a.contentType,
      content: a.content,
    })),
    messageId: m.messageId ?? newMessageId(from),
    // Paths and URLs as content would make nodemailer read files or fetch URLs; content is bytes here.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/** The file name of a message: readable, safe on every file system, and the same for the same Message-ID. */
function emlFileName(messageId: string): string {
  const readable = messageId.replace(/[^A-Za-z0-9._@-]/g, '').slice(0, 100);
  const digest = createHash('sha256').update(messageId).digest('hex').slice(0, 12);
  return `${readable}-${digest}.eml`;
}

async function fileExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * The embedded default: each message becomes `<dir>/<message-id>-<hash>.eml`, written to a
 * temporary file and renamed into place, so a reader never sees half a message. Bcc recipients stay
 * in the file's headers (it is the sender's copy, like a Sent folder). A second send with the same
 * Message-ID finds the file and writes nothing.
 */
export class EmlMailer implements Mailer {
  readonly delivery = 'file';
  // Composes with CRLF line ends, as RFC 5322 requires and as an SMTP server would receive it.
  private readonly composer = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

  constructor(
    private readonly dir: string,
    private readonly from: string,
  ) {}

  async send(message: MailMessage): Promise<SentMail> {
    const mail = composeMail(this.from, message);
    const file = join(this.dir, emlFileName(mail.messageId));
    await mkdir(this.dir, { recursive: true });
    if (await fileExists(file)) return { messageId: mail.messageId };
    const info = await this.composer.sendMail(mail);
    if (!Buffer.isBuffer(info.message)) throw new Error('nodemailer returned a stream despite buffer: true');
    const temporary = join(this.dir, `.${randomBytes(8).toString('hex')}.tmp`);
    try {
      await writeFile(temporary, info.message, { mode: 0o600 });
      await rename(temporary, file);
    } catch (err) {
      await rm(temporary, { force: true });
      throw err;
    }
    return { messageId: mail.messageId };
  }

  async close(): Promise<void> {
    this.composer.close();
  }
}
