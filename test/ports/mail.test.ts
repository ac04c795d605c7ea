// Locks in the mail port: SMTP delivery to a real smtp-server peer with AUTH, parsed back with mailparser (recipients, subject, bodies, attachment bytes, Message-ID), a refused login as a clear `mail_failed`, the `.eml` store writing the same message, once per Message-ID, and SMTP_URL / MAIL_FROM validation that never echoes the password.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, parseSmtpUrl, type SmtpSettings } from '../../core/config.ts';
import { AppError } from '../../core/errors.ts';
import { EmlMailer, type MailMessage, newMessageId } from '../../core/mail.ts';
import { SmtpMailer } from '../../providers/smtp-mailer.ts';
import { createTestContext } from '../helpers.ts';

const USER = 'crm-mailer';
// Characters that must be percent-encoded in a URL, so parsing is exercised too.
const PASSWORD = 'p@ss:w/rd#Secret-42';
const FROM = 'Acme Billing <billing@example.com>';

interface Received {
  mailFrom: string;
  rcptTo: string[];
  raw: Buffer;
}

const received: Received[] = [];
let server: SMTPServer;
let port: number;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-mail-'));
  server = new SMTPServer({
    // Plain SMTP on loopback with a login, as a local relay would take it; no STARTTLS so no certificate.
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASSWORD) return callback(null, { user: USER });
      const refused: Error & { responseCode?: number } = new Error('Invalid username or password');
      refused.responseCode = 535;
      return callback(refused);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mailFrom = session.envelope.mailFrom;
        received.push({
          mailFrom: mailFrom ? mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = listeningPort(server);
});

/** The port a server listening on port 0 was given. */
function listeningPort(peer: SMTPServer): number {
  const address = peer.server.address();
  if (address === null || typeof address === 'string')
    throw new Error('the SMTP peer is not listening on TCP');
  return address.port;
}

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dataDir, { recursive: true, force: true });
});

function smtpSettings(password = PASSWORD): SmtpSettings {
  const settings = parseSmtpUrl(
    `smtp://${encodeURIComponent(USER)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
  );
  if (typeof settings === 'string') throw new Error(settings);
  return settings;
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  const list = field === undefined ? [] : Array.isArray(field) ? field : [field];
  return list.flatMap((f) => f.value.map((v) => v.address ?? ''));
}

// Binary bytes (every value 0-255) so a base64 or line-ending slip would show.
const PDF = Buffer.concat([
  Buffer.from('%PDF-1.7\n'),
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
  randomBytes(2048),
]);

function invoiceMessage(messageId: string): MailMessage {
  return {
    to: [{ name: 'Ada Lovelace', address: 'ada@example.org' }, 'grace@example.org'],
    cc: 'accounts@example.org',
    bcc: 'audit@example.com',
    replyTo: 'support@example.com',
    subject: 'Invoice INV-0042 — 1 250,00 €',
    text: 'Please find invoice INV-0042 attached.\n\nThank you.',
    html: '<p>Please find invoice <strong>INV-0042</strong> attached.</p>',
    attachments: [{ filename: 'INV-0042.pdf', contentType: 'application/pdf', content: PDF }],
    headers: { 'X-Entity-Ref-ID': 'invoice-0042' },
    messageId,
  };
}

/** What a recipient sees, for comparing two copies of one message. */
function visible(mail: ParsedMail) {
  return {
    from: mail.from?.text,
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    replyTo: mail.replyTo?.text,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: mail.messageId,
    ref: mail.headers.get('x-entity-ref-id'),
    attachments: mail.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.contentType,
      sha: a.checksum,
      size: a.content.length,
    })),
  };
}

describe('SMTP adapter', () => {
  it('delivers to the SMTP peer what mailparser reads back field for field', async () => {
    const mailer = new SmtpMailer(smtpSettings(), FROM);
    const messageId = newMessageId(FROM);
    const sent = await mailer.send(invoiceMessage(messageId));
    await mailer.close();

    expect(sent.messageId).toBe(messageId);
    expect(messageId).toMatch(/^<[0-9a-f-]{36}@example\.com>$/);
    const delivery = received.at(-1);
    if (!delivery) throw new Error('the SMTP peer received nothing');
    expect(delivery.mailFrom).toBe('billing@example.com');
    expect(delivery.rcptTo.sort()).toEqual(
      ['accounts@example.org', 'ada@example.org', 'audit@example.com', 'grace@example.org'].sort(),
    );
    // Bcc goes in the envelope only.
    expect(delivery.raw.toString('latin1')).not.toMatch(/^bcc:/im);

    const mail = await simpleParser(delivery.raw);
    expect(mail.messageId).toBe(messageId);
    expect(mail.from?.value).toEqual([{ name: 'Acme Billing', address: 'billing@example.com' }]);
    expect(addresses(mail.to)).toEqual(['ada@example.org', 'grace@example.org']);
    expect(addresses(mail.cc)).toEqual(['accounts@example.org']);
    expect(mail.bcc).toBeUndefined();
    expect(mail.replyTo?.value[0]?.address).toBe('support@example.com');
    expect(mail.subject).toBe('Invoice INV-0042 — 1 250,00 €');
    expect(mail.text?.trim()).toBe('Please find invoice INV-0042 attached.\n\nThank you.');
    expect(mail.html).toBe('<p>Please find invoice <strong>INV-0042</strong> attached.</p>');
    expect(mail.headers.get('x-entity-ref-id')).toBe('invoice-0042');
    expect(mail.attachments).toHaveLength(1);
    expect(mail.attachments[0]?.filename).toBe('INV-0042.pdf');
    expect(mail.attachments[0]?.contentType).toBe('application/pdf');
    expect(Buffer.compare(mail.attachments[0]?.content ?? Buffer.alloc(0), PDF)).toBe(0);
  });

  it('makes up a Message-ID in the sender domain when the caller gives none, and returns it', async () => {
    const mailer = new SmtpMailer(smtpSettings(), FROM);
    const sent = await mailer.send({
      to: 'ada@example.org',
      subject: 'Reset your password',
      text: 'Use this link.',
    });
    await mailer.close();
    const delivery = received.at(-1);
    if (!delivery) throw new Error('the SMTP peer received nothing');
    const mail = await simpleParser(delivery.raw);
    expect(sent.messageId).toMatch(/^<[^@]+@example\.com>$/);
    expect(mail.messageId).toBe(sent.messageId);
    expect(mail.html).toBe(false);
  });

  /** Sends a small message that must fail, closes the mailer and returns the AppError it failed with. */
  async function failedSend(mailer: SmtpMailer): Promise<AppError> {
    const error = await mailer.send({ to: 'ada@example.org', subject: 'Hello', text: 'Hi' }).then(
      () => null,
      (err: unknown) => err,
    );
    await mailer.close();
    if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
    return error;
  }

  it('turns a refused login into mail_failed saying so, permanent, without the password', async () => {
    const count = received.length;
    const mailer = new SmtpMailer(smtpSettings('wrong-password'), FROM);
    const error = await failedSend(mailer);
    expect(error.code).toBe('mail_failed');
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/refused the login.*535/);
    expect(error.body.permanent).toBe(true);
    expect(JSON.stringify(error.body)).not.toContain('wrong-password');
    expect(received.length).toBe(count);
  });

  it('reports an unreachable server as a failure a retry may get past', async () => {
    const closed = new SMTPServer({ logger: false });
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = listeningPort(closed);
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const mailer = new SmtpMailer({ ...smtpSettings(), port: closedPort }, FROM);
    const error = await failedSend(mailer);
    expect(error.code).toBe('mail_failed');
    expect(error.message).toMatch(/Could not reach the mail server/);
    expect(error.body.permanent).toBe(false);
  });

  it('refuses an invalid message before connecting: no body, a header in the subject, a reserved header', async () => {
    const count = received.length;
    const mailer = new SmtpMailer(smtpSettings(), FROM);
    await expect(mailer.send({ to: 'ada@example.org', subject: 'No body' })).rejects.toThrow(
      /Invalid mail message: text: a message needs a text or an HTML body/,
    );
    await expect(
      mailer.send({ to: 'ada@example.org', subject: 'Hi\r\nBcc: victim@example.org', text: 'x' }),
    ).rejects.toThrow(/subject: must not contain control characters/);
    await expect(
      mailer.send({ to: 'ada@example.org', subject: 'Hi', text: 'x', headers: { From: 'ceo@example.com' } }),
    ).rejects.toThrow(/headers\.From: a header the port sets itself/);
    await expect(
      mailer.send({ to: 'not-an-address', subject: 'Hi', text: 'x', messageId: 'no-brackets@example.com' }),
    ).rejects.toThrow(/to: .*messageId: a Message-ID of the form <unique@domain>/s);
    await mailer.close();
    expect(received.length).toBe(count);
  });
});

describe('.eml store (embedded default)', () => {
  it('writes one RFC 5322 file that mailparser reads back as the SMTP peer received it', async () => {
    const dir = join(dataDir, 'mail');
    const messageId = newMessageId(FROM);
    const store = new EmlMailer(dir, FROM);
    const smtp = new SmtpMailer(smtpSettings(), FROM);
    expect(await store.send(invoiceMessage(messageId))).toEqual({ messageId });
    await smtp.send(invoiceMessage(messageId));
    await smtp.close();

    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^[0-9a-f-]{36}@example\.com-[0-9a-f]{12}\.eml$/);
    const raw = readFileSync(join(dir, files[0] ?? ''));
    // RFC 5322 lines end in CRLF: no bare LF anywhere.
    expect(raw.toString('latin1')).not.toMatch(/[^\r]\n/);
    const stored = await simpleParser(raw);
    const delivery = received.at(-1);
    if (!delivery) throw new Error('the SMTP peer received nothing');
    const overSmtp = await simpleParser(delivery.raw);
    expect(visible(stored)).toEqual(visible(overSmtp));
    expect(visible(stored).attachments[0]?.size).toBe(PDF.length);
    // The file is the sender's copy: it keeps the Bcc that SMTP carries in the envelope only.
    expect(addresses(stored.bcc)).toEqual(['audit@example.com']);
  });

  it('writes a message once per Message-ID, so a retried job leaves one file', async () => {
    const dir = join(dataDir, 'retry');
    const store = new EmlMailer(dir, FROM);
    const messageId = '<job-7f3a@example.com>';
    await store.send({ to: 'ada@example.org', subject: 'First attempt', text: 'one', messageId });
    await store.send({ to: 'ada@example.org', subject: 'Second attempt', text: 'two', messageId });
    await store.send({ to: 'ada@example.org', subject: 'Another message', text: 'three' });
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(2);
    expect(files.some((f) => f.endsWith('.tmp'))).toBe(false);
    const first = files.find((f) => f.startsWith('job-7f3a@example.com-'));
    if (!first) throw new Error(`no file for the job's Message-ID among ${files.join(', ')}`);
    const mail = await simpleParser(readFileSync(join(dir, first)));
    expect(mail.subject).toBe('First attempt');
    expect(mail.messageId).toBe(messageId);
  });
});

describe('configuration', () => {
  it('reads SMTP_URL into settings: smtps defaults to 465, smtp to 587, encoded credentials decoded', () => {
    const config = loadConfig({
      SMTP_URL: `smtps://${encodeURIComponent('user@example.com')}:${encodeURIComponent(PASSWORD)}@smtp.example.com`,
      MAIL_FROM: FROM,
    });
    expect(config.smtp).toEqual({
      host: 'smtp.example.com',
      port: 465,
      secure: true,
      auth: { user: 'user@example.com', pass: PASSWORD },
    });
    expect(config.mailFrom).toBe(FROM);
    expect(loadConfig({ SMTP_URL: 'smtp://relay.internal', MAIL_FROM: 'crm@example.com' }).smtp).toEqual({
      host: 'relay.internal',
      port: 587,
      secure: false,
      auth: undefined,
    });
    expect(loadConfig({}).smtp).toBeUndefined();
  });

  it('refuses a bad SMTP_URL or MAIL_FROM naming the variable, never quoting the password', () => {
    const bad = [
      'http://user:hunter2secret@smtp.example.com',
      'smtp://user:hunter2secret@smtp.example.com/path',
      'hunter2secret',
    ];
    for (const url of bad) {
      let message = '';
      try {
        loadConfig({ SMTP_URL: url, MAIL_FROM: FROM });
      } catch (err) {
        message = err instanceof Error ? err.message : String(err);
      }
      expect(message).toMatch(/^Invalid configuration: SMTP_URL: /);
      expect(message).not.toContain('hunter2secret');
    }
    expect(() => loadConfig({ SMTP_URL: 'smtp://smtp.example.com' })).toThrow(
      'MAIL_FROM: required when SMTP_URL is set',
    );
    expect(() => loadConfig({ MAIL_FROM: 'Billing <not an address>' })).toThrow(
      /MAIL_FROM: one sender address/,
    );
    expect(() => loadConfig({ MAIL_FROM: 'a@example.com, b@example.com' })).toThrow(/MAIL_FROM/);
  });
});

describe('services.mailer', () => {
  it('is the SMTP adapter when SMTP_URL is set and the .eml store under DATA_DIR/mail otherwise', async () => {
    const smtpUrl = `smtp://${encodeURIComponent(USER)}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}`;
    const withSmtp = await createTestContext({ SMTP_URL: smtpUrl, MAIL_FROM: FROM });
    try {
      const sent = await withSmtp.services.mailer.send({
        to: 'ada@example.org',
        subject: 'Via SMTP',
        text: 'x',
      });
      const delivery = received.at(-1);
      if (!delivery) throw new Error('the SMTP peer received nothing');
      expect((await simpleParser(delivery.raw)).messageId).toBe(sent.messageId);
    } finally {
      await withSmtp.close();
    }

    const embeddedDir = join(dataDir, 'embedded');
    const embedded = await createTestContext({ DATA_DIR: embeddedDir });
    try {
      const count = received.length;
      const sent = await embedded.services.mailer.send({
        to: 'ada@example.org',
        subject: 'On disk',
        text: 'x',
      });
      const files = readdirSync(join(embeddedDir, 'mail'));
      expect(files).toHaveLength(1);
      const mail = await simpleParser(readFileSync(join(embeddedDir, 'mail', files[0] ?? '')));
      expect(mail.messageId).toBe(sent.messageId);
      expect(mail.from?.value).toEqual([{ name: 'CRM', address: 'no-reply@localhost' }]);
      expect(received.length).toBe(count);
    } finally {
      await embedded.close();
    }
  });
});
