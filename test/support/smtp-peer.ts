// A real SMTP server for the mail tests (smtp-server on a free port, any sender accepted): every
// message it accepts is parsed with mailparser and kept in `received` (its SMTP envelope, which
// alone names Bcc recipients, in `envelopes`), so a test asserts on recipients, subject, bodies,
// attachments and headers as a mailbox would see them. Plain SMTP with no login by default; a
// connected-account test asks for a login (`auth`), STARTTLS or TLS from the first byte (`tls`).
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { SelfSignedCertificate } from './https-receiver.ts';

export interface SmtpPeer {
  /** `smtp://127.0.0.1:<port>`, the SMTP_URL that points the server's mailer here. */
  url: string;
  /** Every message accepted so far, parsed, in arrival order. */
  received: ParsedMail[];
  /** The SMTP envelope of each accepted message, in the same order as `received`. */
  envelopes: Array<{ from: string; to: string[] }>;
  host: string;
  port: number;
  /** Logins attempted (accepted or not), by user name. */
  logins: string[];
  /** SMTP sessions opened so far (a pooled client reusing one adds none). */
  readonly connections: number;
  /** SMTP sessions ended so far. */
  readonly closed: number;
  /**
   * Session errors the server reported (a client that hangs up during the TLS handshake because it
   * does not trust the certificate): kept for the test to read instead of crashing the run.
   */
  errors: Error[];
  close(): Promise<void>;
}

export interface SmtpPeerOptions {
  /** Recipients answered with a temporary failure (451), as a busy mailbox would. */
  refuse?: (address: string) => boolean;
  /** Require this login (AUTH PLAIN/LOGIN); a wrong one is answered 535. */
  auth?: { username: string; password: string };
  /**
   * Serve TLS with this certificate: from the first byte when `secure`, else offered as STARTTLS.
   * Without it the peer offers no TLS at all.
   */
  tls?: { certificate: SelfSignedCertificate; secure?: boolean };
  /**
   * Called on each MAIL FROM before it is answered; the session waits until it resolves (a test
   * holds a sender there, between its claim and its send, to kill it).
   */
  onMailFrom?: (address: string) => Promise<void>;
  /** Offer no AUTH at all (a relay that takes mail without a login). */
  noAuth?: boolean;
}

export async function startSmtpPeer(options: SmtpPeerOptions = {}): Promise<SmtpPeer> {
  const received: ParsedMail[] = [];
  const envelopes: Array<{ from: string; to: string[] }> = [];
  const logins: string[] = [];
  const errors: Error[] = [];
  const sessions = { opened: 0, closed: 0 };
  const auth = options.auth;
  const tls: Partial<SMTPServerOptions> = options.tls
    ? {
        secure: options.tls.secure === true,
        key: options.tls.certificate.key,
        cert: options.tls.certificate.cert,
      }
    : { secure: false };
  const disabled: string[] = [];
  if (!options.tls) disabled.push('STARTTLS');
  if (options.noAuth) disabled.push('AUTH');
  const server = new SMTPServer({
    ...tls,
    disabledCommands: disabled,
    authOptional: auth === undefined,
    // Login over a plain connection is allowed: tests on 127.0.0.1 check the exchange, not the wire.
    allowInsecureAuth: true,
    // A pooled client (providers/smtp-account.ts) keeps its session open while idle: closing the
    // peer ends such sessions after 100 ms instead of smtp-server's default 30 s wait for them.
    closeTimeout: 100,
    logger: false,
    onConnect(_session, callback) {
      sessions.opened++;
      callback();
    },
    onClose() {
      sessions.closed++;
    },
    onAuth(attempt, _session, callback) {
      logins.push(attempt.username ?? '');
      if (auth && attempt.username === auth.username && attempt.password === auth.password)
        return callback(null, { user: attempt.username });
      if (!auth) return callback(null, { user: attempt.username ?? 'anonymous' });
      const error: Error & { responseCode?: number } = new Error('Invalid username or password');
      error.responseCode = 535;
      return callback(error);
    },
    onMailFrom(address, _session, callback) {
      if (!options.onMailFrom) return callback();
      options.onMailFrom(address.address).then(
        () => callback(),
        (err: Error) => callback(err),
      );
    },
    onRcptTo(address, _session, callback) {
      if (options.refuse?.(address.address)) {
        const error: Error & { responseCode?: number } = new Error('Mailbox busy, try again later');
        error.responseCode = 451;
        return callback(error);
      }
      return callback();
    },
    onData(stream, session, callback) {
      const envelope = {
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        to: session.envelope.rcptTo.map((r) => r.address),
      };
      simpleParser(stream)
        .then((mail) => {
          received.push(mail);
          envelopes.push(envelope);
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  server.on('error', (err: Error) => errors.push(err));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('SMTP peer not on TCP');
  return {
    url: `smtp://127.0.0.1:${address.port}`,
    received,
    envelopes,
    host: '127.0.0.1',
    port: address.port,
    logins,
    get connections() {
      return sessions.opened;
    },
    get closed() {
      return sessions.closed;
    },
    errors,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
