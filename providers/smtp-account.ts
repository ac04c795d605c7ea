// The production AccountMailer (core/account-mail.ts): a user's own SMTP server through nodemailer.
// Failures become one code and one sentence for the account's owner: the server's address and the
// password never appear in them.
//
// Sends go through a pooled transport per account (nodemailer `pool: true`, POOL_MAX_CONNECTIONS
// sessions at most), so a worker sending many emails for one account logs in once and reuses the
// session. A pool is keyed by the account's settings and the checked address: new settings (or DNS
// naming another address) get a new pool and the account's old one is closed once its sends in
// flight end; a pool idle for POOL_IDLE_MS is closed; at most MAX_POOLS stay open. The pool never
// sends a message again by itself (`maxRequeues: 0`): whether a failed send is retried is the job's
// decision (its claim and lease, core/leased-rows.ts), so a mail is still never sent twice by this
// process. A verification always opens its own session. docs/email.md "Pooled SMTP sessions".
//
// The host is tenant input, so unless `allowPrivateHosts` the name is resolved here, every address
// checked (core/network-guard.ts), and nodemailer connects to the checked address with the name
// kept for TLS (SNI and certificate check): a second lookup that could answer 127.0.0.1 (DNS
// rebinding) never happens.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { createTransport, type Transporter } from 'nodemailer';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import {
  AccountMailError,
  type AccountMailer,
  type SmtpAccountSettings,
  type SmtpFailureCode,
  type SmtpVerifyResult,
} from '../core/account-mail.ts';
import { composeMail, type MailMessage, type SentMail } from '../core/mail.ts';
import { PrivateHostError, resolvePublicAddress } from '../core/network-guard.ts';

const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 60_000;
/**
 * A verification is an API request waiting for its answer (it runs before the request's database
 * transaction), so a server that stalls after the greeting is given less time than a send, which
 * has a message to transfer.
 */
const VERIFY_SOCKET_TIMEOUT_MS = 15_000;
/** Sessions one account's server is asked to hold at once by this process (servers cap them per login). */
const POOL_MAX_CONNECTIONS = 5;
/** Messages per session before it is replaced (a server may cap them per session). */
const POOL_MAX_MESSAGES = 100;
/** A pool without a send for this long is closed: well under the 5 minutes RFC 5321 gives a server. */
const POOL_IDLE_MS = 30_000;
/** Pools kept open at most; the least recently used is closed first. */
const MAX_POOLS = 64;

export interface SmtpAccountMailerOptions {
  /** Extra certificate authorities to trust (tests: their SMTP peer's self-signed certificate). */
  ca?: string | Buffer | undefined;
  /** Shorter limits (tests of a server that never answers). */
  timeoutsMs?: { connection?: number; greeting?: number; socket?: number };
  /** CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS: connect to loopback/private addresses too (development, tests). */
  allowPrivateHosts?: boolean;
  /** How long an unused pool stays open (tests shorten it). */
  poolIdleMs?: number;
}

/** One pooled transport: an account's settings at one checked address. */
interface Pool {
  key: string;
  account: string | undefined;
  transport: Transporter<SMTPTransport.SentMessageInfo>;
  /** Sends started and not yet answered: a retired pool closes when this reaches 0. */
  inFlight: number;
  retired: boolean;
  idleTimer: NodeJS.Timeout | undefined;
}

interface Failure {
  code: SmtpFailureCode;
  reason: string;
  permanent: boolean;
}

const CERTIFICATE_ERRORS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

function field(err: unknown, name: string): unknown {
  return typeof err === 'object' && err !== null ? (err as Record<string, unknown>)[name] : undefined;
}

/** The innermost code of an error and its causes (nodemailer wraps socket errors). */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current && depth < 5; depth++) {
    const code = field(current, 'code');
    if (typeof code === 'string') codes.push(code);
    current = field(current, 'cause');
  }
  return codes;
}

const TLS_REQUIRED_REASON =
  'The mail server offers no STARTTLS, so the login would cross the network unencrypted (set smtp.require_tls to false to allow it)';
const AUTH_UNSUPPORTED_REASON = 'The mail server offers no way to log in (no AUTH)';

/** A session this adapter ends itself before AUTH: the server cannot upgrade, or offers no login. */
class SessionRefusal extends Error {
  constructor(
    readonly code: 'tls_required' | 'auth_unsupported',
    message: string,
  ) {
    super(message);
  }
}

/** Reads a nodemailer error into one code and one sentence. */
function classifySmtpError(err: unknown): Failure {
  if (err instanceof PrivateHostError) {
    return {
      code: 'private_host',
      reason:
        'The mail server is on a private, loopback or otherwise internal network address, which connected accounts may not use',
      permanent: true,
    };
  }
  const codes = codesOf(err);
  const message = err instanceof Error ? err.message : String(err);
  const response = field(err, 'response');
  const said = typeof response === 'string' ? ` (${response.slice(0, 200)})` : '';
  const permanent = field(err, 'permanent') === true;
  if (codes.some((c) => CERTIFICATE_ERRORS.has(c)) || /certificate|self[- ]signed/i.test(message)) {
    return {
      code: 'certificate',
      reason:
        "The mail server's TLS certificate is not trusted (self-signed, expired or for another host name)",
      permanent: true,
    };
  }
  if (err instanceof SessionRefusal) return { code: err.code, reason: err.message, permanent: true };
  // With requireTLS nodemailer sends STARTTLS whether offered or not; a refusal of that command is
  // a server that cannot upgrade, not a broken handshake.
  if (field(err, 'command') === 'STARTTLS' && typeof response === 'string')
    return { code: 'tls_required', reason: TLS_REQUIRED_REASON, permanent: true };
  if (codes.includes('EAUTH'))
    return { code: 'auth_failed', reason: `The mail server refused the login${said}`, permanent: true };
  if (codes.includes('ENOAUTH'))
    return { code: 'auth_unsupported', reason: AUTH_UNSUPPORTED_REASON, permanent: true };
  if (codes.includes('ECONNREFUSED') || /ECONNREFUSED/.test(message))
    return { code: 'unreachable', reason: 'The mail server refused the connection', permanent: false };
  if (codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN') || codes.includes('EDNS'))
    return {
      code: 'unreachable',
      reason: "The mail server's host name could not be resolved",
      permanent: false,
    };
  if (codes.includes('ETIMEDOUT') || /timeout/i.test(message))
    return { code: 'timeout', reason: 'The mail server did not answer in time', permanent: false };
  if (codes.includes('ETLS') || /TLS|SSL|wrong version number/i.test(message))
    return { code: 'unreachable', reason: 'The TLS handshake with the mail server failed', permanent: false };
  if (codes.includes('EENVELOPE') || codes.includes('EMESSAGE'))
    return { code: 'rejected', reason: `The mail server refused the sender or recipients${said}`, permanent };
  if (typeof field(err, 'responseCode') === 'number')
    return { code: 'rejected', reason: `The mail server refused the message${said}`, permanent };
  return { code: 'unreachable', reason: 'The mail server could not be reached', permanent: false };
}

/** Where to connect: the checked address (or the name itself when private hosts are allowed). */
interface Target {
  host: string;
  /** The name for TLS (SNI, certificate check) when connecting to an address resolved here. */
  servername: string | undefined;
}

export class SmtpAccountMailer implements AccountMailer {
  /** Map order is the LRU order: a used pool moves to the end. */
  private readonly pools = new Map<string, Pool>();
  /** Each account's current pool, so new settings retire the old one. */
  private readonly byAccount = new Map<string, Pool>();

  constructor(private readonly options: SmtpAccountMailerOptions = {}) {}

  /** Resolves and checks the host once (throws PrivateHostError or the DNS error). */
  private async target(settings: SmtpAccountSettings): Promise<Target> {
    if (this.options.allowPrivateHosts) return { host: settings.host, servername: undefined };
    const { address } = await resolvePublicAddress(settings.host);
    return { host: address, servername: isIP(settings.host) ? undefined : settings.host };
  }

  private connectionOptions(
    settings: SmtpAccountSettings,
    target: Target,
    socketTimeoutMs = SOCKET_TIMEOUT_MS,
  ): SMTPConnection.Options {
    const t = this.options.timeoutsMs ?? {};
    return {
      host: target.host,
      port: settings.port,
      secure: settings.secure,
      // STARTTLS before AUTH, or no session: nodemailer otherwise logs in over plain text when the
      // server does not offer it (or a man in the middle strips the offer).
      requireTLS: !settings.secure && settings.requireTls,
      connectionTimeout: t.connection ?? CONNECTION_TIMEOUT_MS,
      greetingTimeout: t.greeting ?? GREETING_TIMEOUT_MS,
      socketTimeout: t.socket ?? socketTimeoutMs,
      tls: {
        ...(this.options.ca ? { ca: this.options.ca } : {}),
        ...(target.servername ? { servername: target.servername } : {}),
      },
      // nodemailer's own logging stays off: its debug output would include the AUTH exchange.
      logger: false,
      debug: false,
    };
  }

  /** The account's pool for these settings at this address, counted as in use until released. */
  private acquire(settings: SmtpAccountSettings, target: Target): Pool {
    // A digest, so no map key holds the password; every setting that changes the session is in it.
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          settings.host,
          settings.port,
          settings.secure,
          settings.requireTls,
          settings.username,
          settings.password,
          target.host,
          target.servername ?? null,
        ]),
      )
      .digest('hex');
    let pool = this.pools.get(key);
    if (pool) this.pools.delete(key);
    else {
      const previous = settings.accountId ? this.byAccount.get(settings.accountId) : undefined;
      if (previous) this.retire(previous);
      const options: SMTPTransport.Options = {
        ...this.connectionOptions(settings, target),
        auth: { user: settings.username, pass: settings.password },
      };
      pool = {
        key,
        account: settings.accountId,
        transport: createTransport({
          ...options,
          pool: true,
          maxConnections: POOL_MAX_CONNECTIONS,
          maxMessages: POOL_MAX_MESSAGES,
          // Never send a message again after its session dropped: the job decides (header).
          maxRequeues: 0,
          idleTimeout: this.options.poolIdleMs ?? POOL_IDLE_MS,
        }),
        inFlight: 0,
        retired: false,
        idleTimer: undefined,
      };
      if (settings.accountId) this.byAccount.set(settings.accountId, pool);
    }
    this.pools.set(key, pool);
    clearTimeout(pool.idleTimer);
    pool.idleTimer = undefined;
    pool.inFlight++;
    for (const oldest of this.pools.values()) {
      if (this.pools.size <= MAX_POOLS) break;
      this.retire(oldest);
    }
    return pool;
  }

  private release(pool: Pool): void {
    pool.inFlight--;
    if (pool.inFlight > 0) return;
    if (pool.retired) {
      pool.transport.close();
      return;
    }
    pool.idleTimer = setTimeout(() => this.retire(pool), this.options.poolIdleMs ?? POOL_IDLE_MS);
    pool.idleTimer.unref();
  }

  /** No new sends on this pool; closed now if idle, else when its last send in flight ends. */
  private retire(pool: Pool): void {
    if (pool.retired) return;
    pool.retired = true;
    clearTimeout(pool.idleTimer);
    if (this.pools.get(pool.key) === pool) this.pools.delete(pool.key);
    if (pool.account && this.byAccount.get(pool.account) === pool) this.byAccount.delete(pool.account);
    if (pool.inFlight === 0) pool.transport.close();
  }

  /** Pools open now (tests). */
  get openPools(): number {
    return this.pools.size;
  }

  /** Closes every pool; sends in flight finish first. */
  async close(): Promise<void> {
    for (const pool of [...this.pools.values()]) this.retire(pool);
  }

  /**
   * One SMTP session by hand (not transport.verify) so the answer can say what happened: the
   * greeting and EHLO, TLS from the first byte when `secure`, else STARTTLS (nodemailer upgrades
   * when the server offers it; a session left plain with `requireTls` ends here as tls_required,
   * before any password is sent), then AUTH only if the server offers it (else auth_unsupported:
   * nodemailer would try AUTH PLAIN anyway and report the refusal as a failed login), QUIT.
   */
  async verify(settings: SmtpAccountSettings): Promise<SmtpVerifyResult> {
    let connection: SMTPConnection | undefined;
    try {
      const target = await this.target(settings);
      const open = new SMTPConnection({
        ...this.connectionOptions(settings, target, VERIFY_SOCKET_TIMEOUT_MS),
        // Checked by hand below, so the answer says tls_required rather than a refused command.
        requireTLS: false,
      });
      connection = open;
      await new Promise<void>((resolve, reject) => {
        // Kept for the whole session: a socket error after the login (during QUIT) must not be an
        // unhandled 'error' event; once settled, a later reject is a no-op.
        open.on('error', reject);
        open.connect(() => {
          if (!settings.secure && settings.requireTls && !open.secure)
            return reject(new SessionRefusal('tls_required', TLS_REQUIRED_REASON));
          if (!open.allowsAuth)
            return reject(new SessionRefusal('auth_unsupported', AUTH_UNSUPPORTED_REASON));
          open.login({ user: settings.username, pass: settings.password }, (err) =>
            err ? reject(err) : resolve(),
          );
        });
      });
      // `secure` turns true when a plain session was upgraded with STARTTLS.
      const starttls = !settings.secure && open.secure;
      open.quit();
      return { ok: true, starttls };
    } catch (err) {
      const failure = classifySmtpError(err);
      return { ok: false, code: failure.code, reason: failure.reason };
    } finally {
      connection?.close();
    }
  }

  async send(settings: SmtpAccountSettings, message: MailMessage & { from: string }): Promise<SentMail> {
    const { from, ...rest } = message;
    const mail = composeMail(from, rest);
    let pool: Pool | undefined;
    try {
      // Resolved and checked on every send; a pool only ever connects to the address it was made for.
      pool = this.acquire(settings, await this.target(settings));
      await pool.transport.sendMail(mail);
      return { messageId: mail.messageId };
    } catch (err) {
      const failure = classifySmtpError(err);
      throw new AccountMailError(failure.code, failure.reason, failure.permanent);
    } finally {
      if (pool) this.release(pool);
    }
  }
}
