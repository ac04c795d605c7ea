// The password reset's rules: a request is a row first and a job second, whatever the address (so
// the route's work and time do not depend on whether it is a user's); the job finds the live user,
// issues a token (32 random bytes, kept as its SHA-256 hash, one hour, single use) and queues the
// mail through the outbox in one transaction, at most RESET_MAILS_PER_HOUR a user an hour; confirm
// spends the token, sets the new password and ends every session of the user in one transaction.
import { createHash, randomBytes } from 'node:crypto';
import { and, count, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import { z } from 'zod';
import { hashPassword } from '../../core/auth/passwords.ts';
import { replacePassword } from '../../core/auth/sessions.ts';
import { hashToken } from '../../core/auth/tokens.ts';
import type { Executor } from '../../core/db/client.ts';
import { organizations, users } from '../../core/db/schema.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { zodDetails } from '../../core/invoke.ts';
import { queueMail } from '../../core/mail-outbox.ts';
import type { Services } from '../../core/services.ts';
import { emailField, passwordField } from '../../core/users.ts';
import { resetMail } from './mail.ts';
import { passwordResetRequests, passwordResetTokens, type ResetOutcome } from './tables.ts';

const HOUR_MS = 60 * 60 * 1000;
/** How long a reset link works. */
const RESET_TOKEN_TTL_MS = HOUR_MS;
/** Mails one user receives at most in an hour, whatever the number of requests: more are dropped silently. */
const RESET_MAILS_PER_HOUR = 3;
/** The longest text that can be a user's address (core/users.ts emailField). */
const MAX_ADDRESS_LENGTH = 254;

export const RESET_REQUESTED_MESSAGE =
  'If an account uses this address, a link to choose a new password is on its way. It works once, for one hour.';
export const PASSWORD_CHANGED_MESSAGE = 'Your password has been changed. Every session was signed out.';

export const resetRequestInput = z.strictObject({
  email: z
    .string()
    .describe(
      'The address of the account. Any text is accepted and answered alike: whether it belongs to an account is never told',
    ),
});

export const resetConfirmInput = z.strictObject({
  token: z.string().min(1).max(200).describe('The token of the link in the reset mail (`?token=`)'),
  password: passwordField.describe('The new password, 8 to 200 characters'),
});

export const resetMessageOutput = z.object({
  message: z.string().describe('What happens next, for a person to read'),
});

function parse<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new AppError('validation_failed', { details: zodDetails(parsed.error) });
  return parsed.data;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The wake-up of one request's job; the request id is its job id, so a repeated wake-up adds nothing. */
export async function wakeRequest(services: Services, id: string, jobId = id): Promise<void> {
  await services.jobs.enqueue('password_reset.process', { id }, { jobId });
}

/**
 * `POST /api/v1/auth/password-reset`: one insert and one wake-up, the same for every address (an
 * unknown one, a deactivated user's, a malformed one). What the address is worth is the job's
 * business, after the answer. A lost wake-up is found by the sweep (jobs.ts).
 */
export async function requestReset(
  services: Services,
  raw: unknown,
  ip: string,
  now = new Date(),
): Promise<void> {
  const input = parse(resetRequestInput, raw);
  const address = input.email.trim().toLowerCase();
  const id = newId(now);
  await services.db.system.insert(passwordResetRequests).values({
    id,
    email: address.length <= MAX_ADDRESS_LENGTH ? address : null,
    emailHash: sha256(address),
    ip,
    requestedAt: now,
  });
  try {
    await wakeRequest(services, id);
  } catch (err) {
    // The row is the truth: the sweep wakes it. The caller's answer must not differ by address, and does not.
    services.logger.warn({ err, resetRequestId: id }, 'password reset request not woken; the sweep will');
  }
}

/**
 * The live user behind an address (compared as login does, lower-cased: the unique index
 * users_email_live_uq), with their organization's status, locked for the job's transaction.
 */
async function lockedUserByEmail(tx: Executor, address: string) {
  const [row] = await tx
    .select({
      id: users.id,
      orgId: users.orgId,
      email: users.email,
      name: users.name,
      status: users.status,
      orgStatus: organizations.status,
    })
    .from(users)
    .innerJoin(organizations, eq(organizations.id, users.orgId))
    .where(and(sql`lower(${users.email}) = ${address}`, isNull(users.deletedAt)))
    .for('update', { of: users })
    .limit(1);
  return row;
}

interface ProcessedRequest {
  outcome: ResetOutcome;
  /** The outbox row of the mail, when one was queued: wake it after the commit. */
  mailId?: string;
}

/**
 * The job's work for one request, once: claims the row (processed_at), and for an active user of an
 * active organization who had fewer than RESET_MAILS_PER_HOUR mails in the last hour, issues a token
 * and queues the mail, all in one transaction. Undefined when the row was processed already.
 */
export async function processRequest(
  services: Services,
  id: string,
  now = new Date(),
): Promise<ProcessedRequest | undefined> {
  const processed = await services.db.transaction(async (tx): Promise<ProcessedRequest | undefined> => {
    // Locked, then re-checked: of two runs for one request the second waits and finds it processed.
    const [row] = await tx
      .select()
      .from(passwordResetRequests)
      .where(and(eq(passwordResetRequests.id, id), isNull(passwordResetRequests.processedAt)))
      .for('update');
    if (!row) return undefined;
    const finish = async (outcome: ResetOutcome, mailId?: string): Promise<ProcessedRequest> => {
      // The address is forgotten once the request is answered for; its hash stays.
      await tx
        .update(passwordResetRequests)
        .set({ processedAt: now, email: null, outcome })
        .where(eq(passwordResetRequests.id, id));
      return mailId === undefined ? { outcome } : { outcome, mailId };
    };
    const address = row.email === null ? undefined : emailField.safeParse(row.email);
    if (!address?.success) return finish('unknown');
    const user = await lockedUserByEmail(tx, address.data);
    if (!user) return finish('unknown');
    if (user.status !== 'active' || user.orgStatus !== 'active') return finish('inactive');
    // The user's row is locked: two requests for one address count one after the other.
    const [recent] = await tx
      .select({ n: count() })
      .from(passwordResetTokens)
      .where(
        and(
          eq(passwordResetTokens.userId, user.id),
          gt(passwordResetTokens.createdAt, new Date(now.getTime() - HOUR_MS)),
        ),
      );
    if ((recent?.n ?? 0) >= RESET_MAILS_PER_HOUR) return finish('capped');
    const token = randomBytes(32).toString('base64url');
    await tx.insert(passwordResetTokens).values({
      id: newId(now),
      orgId: user.orgId,
      userId: user.id,
      requestId: row.id,
      tokenHash: hashToken(token),
      expiresAt: new Date(now.getTime() + RESET_TOKEN_TTL_MS),
      createdAt: now,
    });
    const link = `${services.config.publicBaseUrl}/reset-password?token=${token}`;
    const queued = await queueMail(tx, {
      orgId: user.orgId,
      key: `password-reset:${row.id}`,
      subject: { type: 'password_reset', id: row.id },
      message: resetMail({ to: user.email, name: user.name, link }),
    });
    return finish('sent', queued.id);
  });
  return processed;
}

/** The token's row if it can still be spent: known, unused, unexpired. */
export async function usableToken(services: Services, token: string, now = new Date()) {
  const [row] = await services.db.system
    .select({ id: passwordResetTokens.id, expiresAt: passwordResetTokens.expiresAt })
    .from(passwordResetTokens)
    .where(
      and(
        eq(passwordResetTokens.tokenHash, hashToken(token)),
        isNull(passwordResetTokens.usedAt),
        gt(passwordResetTokens.expiresAt, now),
      ),
    )
    .limit(1);
  return row;
}

/**
 * `POST /api/v1/auth/password-reset/confirm` and the page's form: the new password against the
 * signup rule, then in one transaction the token spent (a conditional update: of two confirms with
 * one token exactly one finds it unused), the password set, every refresh token of the user revoked
 * and the user's other unused reset tokens spent. An unknown, used or expired token, or one whose
 * user is no longer active in an active organization, is 400 `invalid_reset_token`.
 */
export async function confirmReset(services: Services, raw: unknown, now = new Date()): Promise<void> {
  const input = parse(resetConfirmInput, raw);
  // scrypt before the transaction: it holds no connection while it works.
  const passwordHash = await hashPassword(input.password);
  const changed = await services.db.transaction(async (tx) => {
    const [claimed] = await tx
      .update(passwordResetTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(passwordResetTokens.tokenHash, hashToken(input.token)),
          isNull(passwordResetTokens.usedAt),
          gt(passwordResetTokens.expiresAt, now),
        ),
      )
      .returning({ userId: passwordResetTokens.userId });
    if (!claimed) return false;
    const [user] = await tx
      .select({ id: users.id, status: users.status, orgStatus: organizations.status })
      .from(users)
      .innerJoin(organizations, eq(organizations.id, users.orgId))
      .where(and(eq(users.id, claimed.userId), isNull(users.deletedAt)))
      .for('update', { of: users })
      .limit(1);
    if (user?.status !== 'active' || user.orgStatus !== 'active') return false;
    await replacePassword(tx, user.id, passwordHash, now);
    // Once the password is chosen, the other links of this user are spent too.
    await tx
      .update(passwordResetTokens)
      .set({ usedAt: now })
      .where(and(eq(passwordResetTokens.userId, user.id), isNull(passwordResetTokens.usedAt)));
    return true;
  });
  if (!changed) throw new AppError('invalid_reset_token');
}

/** Requests still unprocessed `graceMs` after they arrived: their wake-up was lost. */
export async function unprocessedRequests(services: Services, graceMs: number, now = new Date()) {
  return services.db.system
    .select({ id: passwordResetRequests.id })
    .from(passwordResetRequests)
    .where(
      and(
        isNull(passwordResetRequests.processedAt),
        lt(passwordResetRequests.requestedAt, new Date(now.getTime() - graceMs)),
      ),
    )
    .limit(500);
}

/** How long requests and spent or expired tokens are kept (the per-user count needs the last hour). */
const KEEP_MS = 24 * 60 * 60 * 1000;

/** The daily cleanup: requests and expired tokens older than a day. Answers how many rows went. */
export async function cleanupResets(services: Services, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - KEEP_MS);
  const db = services.db.system;
  const requests = await db
    .delete(passwordResetRequests)
    .where(lt(passwordResetRequests.requestedAt, before))
    .returning({ id: passwordResetRequests.id });
  const tokens = await db
    .delete(passwordResetTokens)
    .where(lt(passwordResetTokens.expiresAt, before))
    .returning({ id: passwordResetTokens.id });
  return requests.length + tokens.length;
}
