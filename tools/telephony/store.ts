// The telephony settings store: the organization's provider account (one row per organization), its
// auth token encrypted through the secrets port and bound to the organization (core/secrets.ts
// associated data), the public shape that never carries the token, and the upsert and removal.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { AppError } from '../../core/errors.ts';
import { iso } from '../../core/schemas.ts';
import type { Services } from '../../core/services.ts';
import type { ToolContext } from '../../core/tool.ts';
import { type TelephonySettingsRow, telephonySettings } from './tables.ts';

/** The secrets-port context an organization's auth token is bound to: it decrypts for that organization only. */
export const authTokenContext = (orgId: string) => `telephony_settings.auth_token:${orgId}`;

export const telephonySettingsSchema = z
  .object({
    provider: z.literal('twilio').describe('The telephony provider (twilio)'),
    account_sid: z
      .string()
      .nullable()
      .describe('The Twilio Account SID (AC + 32 hex); null when not configured'),
    friendly_name: z
      .string()
      .nullable()
      .describe("The account's name at the provider, as it answered the check; null when not configured"),
    auth_token_last4: z
      .string()
      .nullable()
      .describe(
        'The last 4 characters of the auth token (the token itself is never returned); null when not configured',
      ),
    configured: z.boolean().describe('True when the organization saved a provider account: telephony is on'),
    verified_at: z
      .string()
      .nullable()
      .describe('When the provider last accepted the credentials (ISO 8601); null when not configured'),
    updated_at: z.string().nullable().describe('Last change (ISO 8601); null when not configured'),
  })
  .describe("The organization's telephony provider settings (never the auth token)");
export type TelephonySettings = z.output<typeof telephonySettingsSchema>;

const NOT_CONFIGURED: TelephonySettings = {
  provider: 'twilio',
  account_sid: null,
  friendly_name: null,
  auth_token_last4: null,
  configured: false,
  verified_at: null,
  updated_at: null,
};

export function serializeTelephonySettings(row: TelephonySettingsRow | undefined): TelephonySettings {
  if (!row) return NOT_CONFIGURED;
  return {
    provider: 'twilio',
    account_sid: row.accountSid,
    friendly_name: row.friendlyName,
    auth_token_last4: row.authTokenLast4,
    configured: true,
    verified_at: iso(row.verifiedAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The organization's row (the tenant transaction shows its own only), or undefined. */
export async function settingsRowOf(db: Executor, orgId: string): Promise<TelephonySettingsRow | undefined> {
  const [row] = await db.select().from(telephonySettings).where(eq(telephonySettings.orgId, orgId));
  return row;
}

export interface VerifiedAccount {
  accountSid: string;
  authToken: string;
  friendlyName: string;
  verifiedAt: Date;
}

/** Saves (inserts or replaces) the organization's verified account; an Account SID another organization holds is a 409. */
export async function saveTelephonySettings(
  ctx: Pick<ToolContext, 'db' | 'auth' | 'services' | 'now'>,
  account: VerifiedAccount,
): Promise<TelephonySettingsRow> {
  const orgId = ctx.auth.orgId;
  const values = {
    provider: 'twilio',
    accountSid: account.accountSid,
    authToken: ctx.services.secrets.encryptSecret(account.authToken, authTokenContext(orgId)),
    authTokenLast4: account.authToken.slice(-4),
    friendlyName: account.friendlyName === '' ? null : account.friendlyName,
    verifiedAt: account.verifiedAt,
    updatedBy: ctx.auth.userId,
    updatedAt: ctx.now,
  };
  try {
    // A savepoint, so a unique violation leaves the tool's transaction usable for the error answer.
    const [row] = await ctx.db.transaction((tx) =>
      tx
        .insert(telephonySettings)
        .values({ orgId, ...values, createdAt: ctx.now })
        .onConflictDoUpdate({ target: telephonySettings.orgId, set: values })
        .returning(),
    );
    if (!row) throw new Error('upsert returned no telephony settings');
    return row;
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError('conflict', {
        message: 'This Twilio account is already connected to another organization',
        details: [
          {
            field: 'account_sid',
            message: 'is already connected to another organization',
            code: 'duplicate',
          },
        ],
        cause: error,
      });
    throw error;
  }
}

/** Removes the organization's account; true when there was one. */
export async function removeTelephonySettings(db: Executor, orgId: string): Promise<boolean> {
  const removed = await db
    .delete(telephonySettings)
    .where(eq(telephonySettings.orgId, orgId))
    .returning({ orgId: telephonySettings.orgId });
  return removed.length > 0;
}

/** The decrypted auth token of a row (bound to its organization). */
export function authTokenOf(services: Pick<Services, 'secrets'>, row: TelephonySettingsRow): string {
  return services.secrets.decryptSecret(row.authToken, authTokenContext(row.orgId));
}
