// A real SMTP server for the mail tests (smtp-server on a free port, plain SMTP, any sender
// accepted): every message it accepts is parsed with mailparser and kept in `received`, so a test
// asserts on recipients, subject, bodies, attachments and headers as a mailbox would see them.
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpPeer {
  /** `smtp://127.0.0.1:<port>`, the SMTP_URL that points the server's mailer here. */
  url: string;
  /** Every message accepted so far, parsed, in arrival order. */
  received: ParsedMail[];
  close(): Promise<void>;
}

export interface SmtpPeerOptions {
  /** Recipients answered with a temporary failure (451), as a busy mailbox would. */
  refuse?: (address: string) => boolean;
}

export async function startSmtpPeer(options: SmtpPeerOptions = {}): Promise<SmtpPeer> {
  const received: ParsedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      if (options.refuse?.(address.address)) {
        const error: Error & { responseCode?: number } = new Error('Mailbox busy, try again later');
        error.responseCode = 451;
        return callback(error);
      }
      return callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push(mail);
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('SMTP peer not on TCP');
  return {
    url: `smtp://127.0.0.1:${address.port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
