// Signup, login and refresh: the public ways to obtain a session. A session is a short-lived JWT
// plus a long-lived refresh token that rotates on every use. Rotated tokens are kept (hashed) so
// that presenting one again is recognised as theft: the whole family is revoked, which also logs
// out whoever holds the newest token of it.
import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../db/client.ts';
import { type OrganizationRow, organizations, refreshTokens, type UserRow, users } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { zodDetails } from '../invoke.ts';
import { createOrganizationWithOwner, organizationSchema, serializeOrganization } from '../organizations.ts';
import type { Services } from '../services.ts';
import {
  emailField,
  findUserByEmail,
  nameField,
  passwordField,
  serializeUser,
  userSchema,
} from '../users.ts';
import { SESSION_TTL_SECONDS, signSession } from './jwt.ts';
import { DUMMY_HASH_PROMISE, verifyPassword } from './passwords.ts';
import { generateRefreshToken, hashToken } from './tokens.ts';

const REFRESH_TTL_SECONDS = 30 * 24 * 60 * 60;

export const signupInput = z.strictObject({
  organization_name: z.string().trim().min(1).max(200).describe('Name of the new organization'),
  name: nameField,
  email: emailField,
  password: passwordField,
});

export const loginInput = z.strictObject({
  email: emailField,
  // Any length is checked against the hash: the strength rule applies when a password is set.
  password: z.string().min(1).max(200).describe('The account password'),
});

export const refreshInput = z.strictObject({
  refresh_token: z
    .string()
    .min(1)
    .max(200)
    .describe('The refresh token from login, signup or the last refresh'),
});

export const sessionTokensSchema = z.object({
  token: z.string().describe('Session JWT; send it as `Authorization: Bearer <token>`'),
  refresh_token: z.string().describe('Single-use token that obtains the next session; store it securely'),
  expires_in: z.number().int().describe('Seconds until the session JWT expires'),
});
export type SessionTokens = z.infer<typeof sessionTokensSchema>;

export const signupOutput = sessionTokensSchema.extend({
  organization: organizationSchema,
  user: userSchema,
});
export const loginOutput = sessionTokensSchema.extend({ user: userSchema });
export type SignupResult = z.infer<typeof signupOutput>;
export type LoginResult = z.infer<typeof loginOutput>;

function parse<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw new AppError('validation_failed', { details: zodDetails(parsed.error) });
  return parsed.data;
}

/** Signs a session JWT and stores a new refresh token (a new family unless one is given). */
async function issueSession(
  tx: Executor,
  services: Services,
  user: Pick<UserRow, 'id' | 'orgId'>,
  now: Date,
  familyId: string = newId(now),
): Promise<SessionTokens> {
  const refreshToken = generateRefreshToken();
  await tx.insert(refreshTokens).values({
    id: newId(now),
    orgId: user.orgId,
    userId: user.id,
    familyId,
    tokenHash: hashToken(refreshToken),
    expiresAt: new Date(now.getTime() + REFRESH_TTL_SECONDS * 1000),
    createdAt: now,
  });
  const token = await signSession(services.jwtKey, { sub: user.id, org: user.orgId }, now);
  return { token, refresh_token: refreshToken, expires_in: SESSION_TTL_SECONDS };
}

function assertOrganizationActive(org: Pick<OrganizationRow, 'status'>): void {
  if (org.status !== 'active') throw new AppError('organization_inactive');
}

export async function signup(services: Services, raw: unknown, now = new Date()): Promise<SignupResult> {
  // Checked before validation: a closed signup says so whatever the body holds.
  if (!services.config.signupEnabled) throw new AppError('signup_disabled');
  const input = parse(signupInput, raw);
  return services.db.transaction(async (tx) => {
    const { organization, owner } = await createOrganizationWithOwner(tx, {
      name: input.organization_name,
      plan: services.config.defaultPlan,
      owner: { name: input.name, email: input.email, password: input.password },
    });
    const tokens = await issueSession(tx, services, owner, now);
    return {
      organization: serializeOrganization(organization),
      user: serializeUser(owner),
      ...tokens,
    };
  });
}

/**
 * The active user (and their active organization) behind an email and password, or
 * `invalid_credentials` (403 `organization_inactive` for an inactive organization). The sign-in of
 * login and of the OAuth authorization page.
 */
export async function verifyCredentials(
  services: Services,
  raw: unknown,
): Promise<{ user: UserRow; organization: OrganizationRow }> {
  const input = parse(loginInput, raw);
  const db = services.db.system;
  const user = await findUserByEmail(db, input.email);
  if (!user?.passwordHash) {
    // Spend the same scrypt time as a real check, so response timing does not reveal the email.
    await verifyPassword(input.password, await DUMMY_HASH_PROMISE);
    throw new AppError('invalid_credentials');
  }
  const passwordOk = await verifyPassword(input.password, user.passwordHash);
  // A deactivated user gets the same answer as a wrong password: the account's state stays private.
  if (!passwordOk || user.status !== 'active') throw new AppError('invalid_credentials');
  const [org] = await db.select().from(organizations).where(eq(organizations.id, user.orgId)).limit(1);
  if (!org) throw new AppError('invalid_credentials');
  assertOrganizationActive(org);
  return { user, organization: org };
}

export async function login(services: Services, raw: unknown, now = new Date()): Promise<LoginResult> {
  const { user } = await verifyCredentials(services, raw);
  const tokens = await services.db.transaction((tx) => issueSession(tx, services, user, now));
  return { ...tokens, user: serializeUser(user) };
}

type RefreshOutcome = { ok: true; tokens: SessionTokens } | { ok: false; error: AppError };

/**
 * Exchanges a refresh token for a new session and a new refresh token of the same family. The
 * outcome is returned rather than thrown from inside the transaction, so that the revocation of a
 * family on reuse commits before the 401 is answered.
 */
export async function refresh(services: Services, raw: unknown, now = new Date()): Promise<SessionTokens> {
  const input = parse(refreshInput, raw);
  const tokenHash = hashToken(input.refresh_token);
  const outcome = await services.db.transaction(async (tx): Promise<RefreshOutcome> => {
    const [row] = await tx
      .select({
        token: refreshTokens,
        user: { id: users.id, orgId: users.orgId, status: users.status, deletedAt: users.deletedAt },
        org: { status: organizations.status },
      })
      .from(refreshTokens)
      .innerJoin(users, eq(users.id, refreshTokens.userId))
      .innerJoin(organizations, eq(organizations.id, refreshTokens.orgId))
      .where(eq(refreshTokens.tokenHash, tokenHash))
      .limit(1);
    const invalid: RefreshOutcome = { ok: false, error: new AppError('invalid_refresh_token') };
    if (!row || row.token.revokedAt !== null || row.token.expiresAt <= now) return invalid;
    if (row.token.rotatedAt !== null) {
      await revokeFamily(tx, row.token.familyId, now);
      services.logger.warn(
        { familyId: row.token.familyId, userId: row.user.id },
        'rotated refresh token reused; family revoked',
      );
      return invalid;
    }
    if (row.user.status !== 'active' || row.user.deletedAt !== null) return invalid;
    if (row.org.status !== 'active') return { ok: false, error: new AppError('organization_inactive') };
    // Conditional on still being current, so of two concurrent refreshes with one token only one
    // wins; the other is treated as reuse.
    const claimed = await tx
      .update(refreshTokens)
      .set({ rotatedAt: now })
      .where(
        and(
          eq(refreshTokens.id, row.token.id),
          isNull(refreshTokens.rotatedAt),
          isNull(refreshTokens.revokedAt),
        ),
      )
      .returning({ id: refreshTokens.id });
    if (claimed.length === 0) {
      await revokeFamily(tx, row.token.familyId, now);
      return invalid;
    }
    return { ok: true, tokens: await issueSession(tx, services, row.user, now, row.token.familyId) };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.tokens;
}

async function revokeFamily(tx: Executor, familyId: string, now: Date): Promise<void> {
  await tx
    .update(refreshTokens)
    .set({ revokedAt: now })
    .where(and(eq(refreshTokens.familyId, familyId), isNull(refreshTokens.revokedAt)));
}

/**
 * Ends every session of a user: each of their refresh tokens not yet revoked is revoked, so no
 * login, signup or refresh of theirs can renew a session (the JWTs already issued live out their
 * SESSION_TTL_SECONDS). Answers how many were revoked.
 */
async function revokeUserRefreshTokens(tx: Executor, userId: string, now: Date): Promise<number> {
  const revoked = await tx
    .update(refreshTokens)
    .set({ revokedAt: now })
    .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)))
    .returning({ id: refreshTokens.id });
  return revoked.length;
}

/**
 * Sets a user's password (its hash, made with core/auth/passwords.ts hashPassword before the
 * transaction: scrypt is slow) and ends every session of theirs, in the caller's transaction: the
 * password reset's confirm. Answers how many refresh tokens were revoked.
 */
export async function replacePassword(
  tx: Executor,
  userId: string,
  passwordHash: string,
  now: Date,
): Promise<number> {
  await tx.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, userId));
  return revokeUserRefreshTokens(tx, userId, now);
}
