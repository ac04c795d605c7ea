// The connected-accounts store: a user's own SMTP accounts (only their owner sees or uses one; for
// anyone else, an owner or admin included, it does not exist), the record shape that never shows a
// secret except to the owner (the inbound URL and signing key), the secrets encrypted through the
// secrets port, and the lookups the email and workflows areas send with: getOwnAccount,
// smtpSettingsOf, senderOf, defaultAccountOf.
import { createHash, randomBytes } from 'node:crypto';
import { and, count, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { SmtpAccountSettings, SmtpVerifyResult } from '../../core/account-mail.ts';
import type { AccountRemovedHook } from '../../core/area.ts';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { AppError, notFound, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso, offsetOf, type Page, paged } from '../../core/schemas.ts';
import type { Services } from '../../core/services.ts';
import type { ToolContext } from '../../core/tool.ts';
import { type ConnectedAccountRow, connectedAccounts } from './tables.ts';

export type { ConnectedAccountRow } from './tables.ts';

const ACCOUNT_STATUSES = ['unverified', 'verified', 'error'] as const;

// ---------------------------------------------------------------------------------------------
// Secrets: each bound to its column and row (core/secrets.ts associated data)

/** The secrets-port context an account's SMTP password is bound to (seeding tools and benchmarks use it too). */
export const smtpPasswordContext = (id: string) => `connected_accounts.smtp_password:${id}`;
const inboundTokenContext = (id: string) => `connected_accounts.inbound_token:${id}`;
const signingKeyContext = (id: string) => `connected_accounts.inbound_signing_key:${id}`;

/** How the public hook finds an account without decrypting anything: SHA-256 hex of the token. */
function inboundTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A fresh inbound token (32 random bytes, base64url) and signing key, encrypted for row `id`. */
function newInboundSecrets(services: Services, id: string) {
  const token = randomBytes(32).toString('base64url');
  const key = randomBytes(32).toString('base64url');
  return {
    inboundTokenHash: inboundTokenHash(token),
    inboundToken: services.secrets.encryptSecret(token, inboundTokenContext(id)),
    inboundSigningKey: services.secrets.encryptSecret(key, signingKeyContext(id)),
  };
}

/** The decrypted inbound signing key of an account (the hook checks signatures with it). */
export function inboundSigningKeyOf(services: Services, row: ConnectedAccountRow): string {
  return services.secrets.decryptSecret(row.inboundSigningKey, signingKeyContext(row.id));
}

// ---------------------------------------------------------------------------------------------
// Exports for the email and workflows areas (keep these names and signatures)

/** The SMTP settings of an account for one call, the password decrypted (never store or log them). */
export function smtpSettingsOf(services: Services, row: ConnectedAccountRow): SmtpAccountSettings {
  return {
    host: row.smtpHost,
    port: row.smtpPort,
    secure: row.smtpSecure,
    requireTls: row.smtpRequireTls,
    username: row.smtpUsername,
    password: services.secrets.decryptSecret(row.smtpPassword, smtpPasswordContext(row.id)),
    accountId: row.id,
  };
}

/**
 * The From header of mail sent through the account: `"Display Name" <email>`, or the bare address.
 * Quotes and backslashes in the name are escaped and line breaks dropped, so a name can never add a
 * header or a second address.
 */
export function senderOf(row: Pick<ConnectedAccountRow, 'email' | 'displayName'>): string {
  const name = (row.displayName ?? '')
    .replace(/\p{Cc}+/gu, ' ')
    .trim()
    .replace(/(["\\])/g, '\\$1');
  return name ? `"${name}" <${row.email}>` : row.email;
}

/** One of the user's own accounts, or null (another user's or organization's is as good as absent). */
export async function getOwnAccount(
  db: Executor,
  orgId: string,
  userId: string,
  id: string,
): Promise<ConnectedAccountRow | null> {
  const [row] = await db
    .select()
    .from(connectedAccounts)
    .where(
      and(
        eq(connectedAccounts.id, id),
        eq(connectedAccounts.orgId, orgId),
        eq(connectedAccounts.userId, userId),
      ),
    )
    .limit(1);
  return row ?? null;
}

/** getOwnAccount, or the 404 a path id names when it is not one of the user's accounts. */
export async function ownAccountOr404(
  db: Executor,
  orgId: string,
  userId: string,
  id: string,
): Promise<ConnectedAccountRow> {
  const row = await getOwnAccount(db, orgId, userId, id);
  if (!row) throw notFound('Connected account');
  return row;
}

/** The user's most recently verified account, else their newest one; null when they have none. */
export async function defaultAccountOf(
  db: Executor,
  orgId: string,
  userId: string,
): Promise<ConnectedAccountRow | null> {
  const [row] = await db
    .select()
    .from(connectedAccounts)
    .where(and(eq(connectedAccounts.orgId, orgId), eq(connectedAccounts.userId, userId)))
    .orderBy(
      sql`case when ${connectedAccounts.status} = 'verified' then 0 else 1 end`,
      sql`${connectedAccounts.verifiedAt} desc nulls last`,
      desc(connectedAccounts.createdAt),
      desc(connectedAccounts.id),
    )
    .limit(1);
  return row ?? null;
}

// ---------------------------------------------------------------------------------------------
// Record shape

const smtpShape = z
  .object({
    host: z.string().describe('SMTP server host name or IP address'),
    port: z
      .number()
      .int()
      .describe('SMTP server port (465 for TLS from the first byte, 587 or 25 otherwise)'),
    secure: z.boolean().describe('True: TLS from the first byte; false: plain, upgraded with STARTTLS'),
    require_tls: z
      .boolean()
      .describe(
        'With secure false: true (the default) refuses to log in unless the session was upgraded with STARTTLS; false allows a plain login',
      ),
    username: z.string().describe('SMTP login name'),
    password_set: z.boolean().describe('Always true: a password is stored (encrypted); it is never shown'),
  })
  .describe('The SMTP server and login, without the password');

export const connectedAccountSchema = z
  .object({
    _id: z.string().describe('Connected account id (24 hex characters)'),
    email: z.string().describe('The address mail is sent from'),
    display_name: z.string().nullable().describe('The name shown beside the address, or null'),
    smtp: smtpShape,
    status: z
      .enum(ACCOUNT_STATUSES)
      .describe('unverified (never checked or changed since), verified, or error (the last check failed)'),
    status_reason: z
      .string()
      .nullable()
      .describe('Why the last verification failed, as one sentence; null unless status is error'),
    status_code: z
      .string()
      .nullable()
      .describe(
        'Short code beside the reason: auth_unsupported, auth_failed, tls_required, private_host, unreachable, timeout or certificate; null unless status is error',
      ),
    verified_at: z.string().nullable().describe('When a verification last succeeded (ISO 8601), or null'),
    last_checked_at: z
      .string()
      .nullable()
      .describe('When it was last verified, either way (ISO 8601), or null'),
    inbound_url: z
      .string()
      .describe(
        'Where your mail provider posts inbound mail for this account (POST, JSON, signed); contains a secret token',
      ),
    inbound_signing_key: z
      .string()
      .describe(
        'The key inbound requests are signed with (hex HMAC-SHA256 of timestamp + token); keep it secret',
      ),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe("One of the caller's connected SMTP accounts (the password is never shown)");
export type ConnectedAccountRecord = z.output<typeof connectedAccountSchema>;

/** The owner's view of an account (only ever built for its owner: it shows the inbound secrets). */
export function serializeAccount(services: Services, row: ConnectedAccountRow): ConnectedAccountRecord {
  const token = services.secrets.decryptSecret(row.inboundToken, inboundTokenContext(row.id));
  const status = ACCOUNT_STATUSES.find((s) => s === row.status) ?? 'unverified';
  return {
    _id: row.id,
    email: row.email,
    display_name: row.displayName,
    smtp: {
      host: row.smtpHost,
      port: row.smtpPort,
      secure: row.smtpSecure,
      require_tls: row.smtpRequireTls,
      username: row.smtpUsername,
      password_set: true,
    },
    status,
    status_reason: row.statusReason,
    status_code: row.statusCode,
    verified_at: iso(row.verifiedAt),
    last_checked_at: iso(row.lastCheckedAt),
    inbound_url: `${services.config.publicBaseUrl}/hooks/email/${token}`,
    inbound_signing_key: inboundSigningKeyOf(services, row),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Writes

export interface SmtpInput {
  host: string;
  port: number;
  secure: boolean;
  require_tls: boolean;
  username: string;
  password: string;
}

export interface CreateAccountInput {
  email: string;
  display_name?: string | null | undefined;
  smtp: SmtpInput;
}

export interface AccountChanges {
  email?: string | undefined;
  display_name?: string | null | undefined;
  smtp?: Partial<SmtpInput> | undefined;
}

type AccountContext = Pick<ToolContext, 'db' | 'auth' | 'now' | 'services'>;

const duplicate = () =>
  new AppError('conflict', {
    error: 'Connected account already exists',
    message: 'You already have a connected account with this email address',
    details: [{ field: 'email', message: 'you already connected this address', code: 'duplicate' }],
  });

/** One of the caller's own accounts, locked for the transaction; 404 for anyone else's. */
async function requireOwnAccount(ctx: AccountContext, id: string): Promise<ConnectedAccountRow> {
  const [row] = await ctx.db
    .select()
    .from(connectedAccounts)
    .where(
      and(
        eq(connectedAccounts.id, id),
        eq(connectedAccounts.orgId, ctx.auth.orgId),
        eq(connectedAccounts.userId, ctx.auth.userId),
      ),
    )
    .for('update')
    .limit(1);
  if (!row) throw notFound('Connected account');
  return row;
}

/** Runs a write that may hit the (org, user, lower(email)) unique index as a 409. */
async function uniqueEmail<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
}

/** Whether the caller already has another account with this address (case-insensitive). */
async function hasAddress(ctx: AccountContext, email: string, exceptId?: string): Promise<boolean> {
  const [row] = await ctx.db
    .select({ id: connectedAccounts.id })
    .from(connectedAccounts)
    .where(
      and(
        eq(connectedAccounts.orgId, ctx.auth.orgId),
        eq(connectedAccounts.userId, ctx.auth.userId),
        sql`lower(${connectedAccounts.email}) = lower(${email})`,
        exceptId === undefined ? undefined : sql`${connectedAccounts.id} <> ${exceptId}`,
      ),
    )
    .limit(1);
  return row !== undefined;
}

export async function insertAccount(
  ctx: AccountContext,
  input: CreateAccountInput,
): Promise<ConnectedAccountRow> {
  // Checked first so a duplicate does not abort the transaction; the unique index still decides races.
  if (await hasAddress(ctx, input.email)) throw duplicate();
  const id = newId(ctx.now);
  const services = ctx.services;
  const rows = await uniqueEmail(() =>
    ctx.db
      .insert(connectedAccounts)
      .values({
        id,
        orgId: ctx.auth.orgId,
        userId: ctx.auth.userId,
        email: input.email,
        displayName: input.display_name ?? null,
        smtpHost: input.smtp.host,
        smtpPort: input.smtp.port,
        smtpSecure: input.smtp.secure,
        smtpRequireTls: input.smtp.require_tls,
        smtpUsername: input.smtp.username,
        smtpPassword: services.secrets.encryptSecret(input.smtp.password, smtpPasswordContext(id)),
        ...newInboundSecrets(services, id),
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      .returning(),
  );
  const row = rows[0];
  if (!row) throw new Error('insert returned no row');
  return row;
}

/**
 * Merges the fields sent. A change to the server or login (any smtp field, a new password included)
 * makes the account unverified again: the last check no longer says anything about it. A change of
 * host, port or username needs the password in the same request (400 naming `smtp.password`): the
 * stored one was given for the old server and login, and verify or send would hand it to the new
 * server, so whoever may edit the account could otherwise collect the mailbox password.
 */
export async function patchAccount(
  ctx: AccountContext,
  id: string,
  changes: AccountChanges,
): Promise<ConnectedAccountRow> {
  const row = await requireOwnAccount(ctx, id);
  if (changes.email !== undefined && (await hasAddress(ctx, changes.email, id))) throw duplicate();
  const set: Partial<typeof connectedAccounts.$inferInsert> = { updatedAt: ctx.now };
  if (changes.email !== undefined) set.email = changes.email;
  if (changes.display_name !== undefined) set.displayName = changes.display_name;
  const smtp = changes.smtp ?? {};
  let smtpChanged = false;
  if (smtp.host !== undefined && smtp.host !== row.smtpHost) {
    set.smtpHost = smtp.host;
    smtpChanged = true;
  }
  if (smtp.port !== undefined && smtp.port !== row.smtpPort) {
    set.smtpPort = smtp.port;
    smtpChanged = true;
  }
  if (smtp.secure !== undefined && smtp.secure !== row.smtpSecure) {
    set.smtpSecure = smtp.secure;
    smtpChanged = true;
  }
  if (smtp.username !== undefined && smtp.username !== row.smtpUsername) {
    set.smtpUsername = smtp.username;
    smtpChanged = true;
  }
  const movesLogin =
    set.smtpHost !== undefined || set.smtpPort !== undefined || set.smtpUsername !== undefined;
  if (movesLogin && smtp.password === undefined)
    throw validationError([
      {
        field: 'smtp.password',
        message:
          'is required when smtp.host, smtp.port or smtp.username changes: the stored password is never sent to another server or login',
        code: 'required',
      },
    ]);
  if (smtp.require_tls !== undefined && smtp.require_tls !== row.smtpRequireTls) {
    set.smtpRequireTls = smtp.require_tls;
    smtpChanged = true;
  }
  if (smtp.password !== undefined) {
    set.smtpPassword = ctx.services.secrets.encryptSecret(smtp.password, smtpPasswordContext(id));
    smtpChanged = true;
  }
  if (smtpChanged) {
    set.status = 'unverified';
    set.statusReason = null;
    set.statusCode = null;
    set.verifiedAt = null;
  }
  const rows = await uniqueEmail(() =>
    ctx.db.update(connectedAccounts).set(set).where(eq(connectedAccounts.id, id)).returning(),
  );
  const updated = rows[0];
  if (!updated) throw notFound('Connected account');
  return updated;
}

/**
 * Deletes the account for good. The accountRemoved hooks of the other areas run first in the same
 * transaction (scheduled email cancels what has not started sending: it could only fail later,
 * with no server to send through); rows already sent or failed keep their history (their account
 * reference becomes null). Returns how many rows the hooks cancelled.
 */
export async function deleteAccount(
  ctx: AccountContext,
  id: string,
  hooks: readonly AccountRemovedHook[],
): Promise<{ cancelled: number }> {
  await requireOwnAccount(ctx, id);
  let cancelled = 0;
  for (const hook of hooks) cancelled += await hook(ctx, id);
  await ctx.db.delete(connectedAccounts).where(eq(connectedAccounts.id, id));
  return { cancelled };
}

/** Records the outcome of a verification: verified (with its time) or error with code and reason. */
export async function recordVerification(
  ctx: AccountContext,
  id: string,
  result: SmtpVerifyResult,
  checkedVersion: Date,
): Promise<ConnectedAccountRow> {
  const current = await requireOwnAccount(ctx, id);
  // The session ran outside this transaction: an edit of the account meanwhile (another server,
  // another password) makes the outcome stale, so it is not recorded and the account stays as edited.
  if (current.updatedAt.getTime() !== checkedVersion.getTime()) return current;
  const set: Partial<typeof connectedAccounts.$inferInsert> = result.ok
    ? {
        status: 'verified',
        statusReason: null,
        statusCode: null,
        verifiedAt: ctx.now,
        lastCheckedAt: ctx.now,
      }
    : { status: 'error', statusReason: result.reason, statusCode: result.code, lastCheckedAt: ctx.now };
  const [row] = await ctx.db
    .update(connectedAccounts)
    .set({ ...set, updatedAt: ctx.now })
    .where(eq(connectedAccounts.id, id))
    .returning();
  if (!row) throw notFound('Connected account');
  return row;
}

/** A new inbound token and signing key; the old ones stop working at once. */
export async function rotateInboundSecret(ctx: AccountContext, id: string): Promise<ConnectedAccountRow> {
  await requireOwnAccount(ctx, id);
  const [row] = await ctx.db
    .update(connectedAccounts)
    .set({ ...newInboundSecrets(ctx.services, id), updatedAt: ctx.now })
    .where(eq(connectedAccounts.id, id))
    .returning();
  if (!row) throw notFound('Connected account');
  return row;
}

/** The caller's accounts, newest first, in the paged envelope. */
export async function listOwnAccounts(ctx: AccountContext, page: Page) {
  const where = and(
    eq(connectedAccounts.orgId, ctx.auth.orgId),
    eq(connectedAccounts.userId, ctx.auth.userId),
  );
  const rows = await ctx.db
    .select()
    .from(connectedAccounts)
    .where(where)
    .orderBy(desc(connectedAccounts.createdAt), desc(connectedAccounts.id))
    .limit(page.limit)
    .offset(offsetOf(page));
  const [total] = await ctx.db.select({ n: count() }).from(connectedAccounts).where(where);
  return paged(
    'connected_accounts',
    rows.map((row) => serializeAccount(ctx.services, row)),
    total?.n ?? 0,
    page,
  );
}

/** The account an inbound token names (system access: the hook has no tenant yet), or null. */
export async function findAccountByInboundToken(
  system: Executor,
  token: string,
): Promise<ConnectedAccountRow | null> {
  const [row] = await system
    .select()
    .from(connectedAccounts)
    .where(eq(connectedAccounts.inboundTokenHash, inboundTokenHash(token)))
    .limit(1);
  return row ?? null;
}
