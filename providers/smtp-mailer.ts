// The production Mailer: system mail over SMTP with nodemailer, from SMTP_URL and MAIL_FROM
// (core/config.ts parses the URL into settings, so the password never travels as a loggable URL).
// A failure becomes AppError `mail_failed` whose message says what the server answered and whose
// `permanent` flag tells a retrying job whether another attempt can help.
import { createTransport } from 'nodemailer';
import type { SmtpSettings } from '../core/config.ts';
import { AppError } from '../core/errors.ts';
import { composeMail, type Mailer, type MailMessage, type SentMail } from '../core/mail.ts';

/** Time limits of one delivery: nodemailer's defaults (2 and 10 minutes) would hold a job for long. */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 60_000;

interface SmtpFailure {
  code: string | undefined;
  responseCode: number | undefined;
  response: string | undefined;
  permanent: boolean;
}

function readFailure(err: unknown): SmtpFailure {
  const fields: Record<string, unknown> = typeof err === 'object' && err !== null ? { ...err } : {};
  const responseCode = typeof fields.responseCode === 'number' ? fields.responseCode : undefined;
  return {
    code: typeof fields.code === 'string' ? fields.code : undefined,
    responseCode,
    response: typeof fields.response === 'string' ? fields.response : undefined,
    // nodemailer sets `permanent` from the reply class (5xx but 503); without a reply it is a
    // network failure, which a later attempt may get past.
    permanent: fields.permanent === true,
  };
}

/**
 * One line for the operator and the caller: what the server said, never the credentials nor the
 * server's address (the caller may be a tenant; the logged cause names the server).
 */
function describeFailure(failure: SmtpFailure): string {
  const said = failure.response ?? (failure.responseCode ? String(failure.responseCode) : undefined);
  switch (failure.code) {
    case 'EAUTH':
      return `The mail server refused the login${said ? ` (${said})` : ''}`;
    case 'ENOAUTH':
      return `The mail server requires a login; give one in SMTP_URL`;
    case 'ECONNECTION':
    case 'ESOCKET':
    case 'EDNS':
    case 'ETIMEDOUT':
    case 'ETLS':
      return `Could not reach the mail server (${failure.code})`;
    case 'EENVELOPE':
      return `The mail server refused the sender or recipients${said ? ` (${said})` : ''}`;
    default:
      return `The mail server refused the message${said ? ` (${said})` : ''}`;
  }
}

export class SmtpMailer implements Mailer {
  readonly delivery = 'smtp';
  private readonly transport;

  constructor(
    settings: SmtpSettings,
    private readonly from: string,
  ) {
    this.transport = createTransport({
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      auth: settings.auth,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: GREETING_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
      // nodemailer's own logging stays off: its debug output would include the AUTH exchange.
      logger: false,
      debug: false,
    });
  }

  async send(message: MailMessage): Promise<SentMail> {
    const mail = composeMail(this.from, message);
    try {
      await this.transport.sendMail(mail);
    } catch (err) {
      const failure = readFailure(err);
      throw new AppError('mail_failed', {
        message: describeFailure(failure),
        extra: { permanent: failure.permanent },
        cause: err,
      });
    }
    return { messageId: mail.messageId };
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
