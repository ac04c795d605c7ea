// The account-mail port: mail a user sends to a lead goes out through the user's own SMTP server
// (a connected account, tools/connected-accounts), not through the system mailer of core/mail.ts.
// Each call names the server and its credentials (the adapter keeps a pooled session per account
// and settings, so sends for one account share a login); `verify` opens a real
// SMTP session (EHLO, TLS when `secure`, else STARTTLS, required before AUTH unless `requireTls` is
// false; AUTH) and says in one word and one sentence why it failed. The production adapter is providers/smtp-account.ts (nodemailer); tests
// use it too, against a real smtp-server peer.
import type { MailMessage, SentMail } from './mail.ts';

/** One account's server and login, the password decrypted for the call (never stored or logged). */
export interface SmtpAccountSettings {
  host: string;
  port: number;
  /** TLS from the first byte (port 465); otherwise plain, upgraded with STARTTLS. */
  secure: boolean;
  /**
   * With `secure` false: the session must be upgraded with STARTTLS before AUTH (the password never
   * crosses the network in plain text); false lets a server without STARTTLS log in over plain text.
   */
  requireTls: boolean;
  username: string;
  password: string;
  /**
   * The connected account these settings are of: the adapter keeps one pooled session set per
   * account, and new settings for it close the old set.
   */
  accountId?: string;
}

/**
 * Why a session failed, as a code the API shows beside the sentence: the reasons of a verification
 * (`unreachable` covers a refused connection, an unknown host name and a failed TLS handshake, the
 * sentence says which), plus `certificate` (an untrusted certificate: a different fix) and, at send
 * time only, `rejected` (the server refused the message or its recipients).
 */
export const SMTP_FAILURE_CODES = [
  'auth_unsupported',
  'auth_failed',
  'tls_required',
  'private_host',
  'unreachable',
  'timeout',
  'certificate',
  'rejected',
] as const;
export type SmtpFailureCode = (typeof SMTP_FAILURE_CODES)[number];

export type SmtpVerifyResult =
  | { ok: true /** Whether the session was upgraded with STARTTLS. */; starttls: boolean }
  | {
      ok: false;
      code: SmtpFailureCode /** One sentence for the account's owner; no password. */;
      reason: string;
    };

/** A failed send: the code, the sentence, and whether another attempt can help. */
export class AccountMailError extends Error {
  constructor(
    readonly code: SmtpFailureCode,
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'AccountMailError';
  }
}

export interface AccountMailer {
  /** Opens a session, upgrades it, logs in, and quits; never throws. */
  verify(settings: SmtpAccountSettings): Promise<SmtpVerifyResult>;
  /**
   * Sends one message (its `from` is the account's address) with the given Message-ID; throws
   * AccountMailError on failure.
   */
  send(settings: SmtpAccountSettings, message: MailMessage & { from: string }): Promise<SentMail>;
  /** Closes pooled sessions (sends in flight finish first); called when the services close. */
  close?(): Promise<void>;
}
