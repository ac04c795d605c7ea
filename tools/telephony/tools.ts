// Telephony settings tools: read, save (after the provider accepted the credentials) and remove the
// organization's Twilio account. The auth token is encrypted at rest and never returned; this file
// declares the tools, the data functions are store.ts.
import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import { messageOutput } from '../../core/schemas.ts';
import { type TelephonyCredentials, TelephonyError } from '../../core/telephony.ts';
import { defineTool } from '../../core/tool.ts';
import type { VerifiedAccount } from './store.ts';
import {
  removeTelephonySettings,
  saveTelephonySettings,
  serializeTelephonySettings,
  settingsRowOf,
  telephonySettingsSchema,
} from './store.ts';

const TOOLSET = 'settings';
const output = z.object({ telephony: telephonySettingsSchema });

const access = (
  kind: 'read' | 'write',
  permission: 'settings.telephony.view' | 'settings.telephony.manage',
) => ({ kind, resource: 'settings', permission }) as const;

const ACCOUNT_SID = /^AC[0-9a-f]{32}$/;
const AUTH_TOKEN = /^[0-9a-f]{32}$/;

const credentialsInvalid = (field: 'auth_token' | 'account_sid', message: string) =>
  new AppError('telephony_credentials_invalid', {
    message,
    details: [{ field, message, code: 'refused' }],
  });

/** Asks the provider for the account the credentials name; its refusals become the house's errors. */
async function verify(
  verifyAccount: (c: TelephonyCredentials) => Promise<{ sid: string; friendlyName: string; status: string }>,
  credentials: TelephonyCredentials,
  now: Date,
): Promise<VerifiedAccount> {
  let account: { sid: string; friendlyName: string; status: string };
  try {
    account = await verifyAccount(credentials);
  } catch (error) {
    if (!(error instanceof TelephonyError)) throw error;
    if (error.outcome === 'rejected' && error.status !== undefined && error.status < 500)
      throw credentialsInvalid(
        'auth_token',
        'Twilio refused these credentials: check the Account SID and the auth token in the Twilio console',
      );
    throw new AppError('telephony_unavailable', {
      message: `Twilio could not check the credentials: ${error.message} Nothing was saved; try again later.`,
      extra: { provider_code: error.code },
      cause: error,
    });
  }
  if (account.sid !== credentials.accountSid)
    throw credentialsInvalid('account_sid', 'Twilio answered for another account than account_sid');
  if (account.status !== 'active')
    throw credentialsInvalid('account_sid', `The Twilio account is ${account.status || 'not active'}`);
  return { ...credentials, friendlyName: account.friendlyName, verifiedAt: now };
}

export const getTelephonySettings = defineTool({
  name: 'get_telephony_settings',
  title: 'Get telephony settings',
  description:
    "Returns the organization's Twilio settings (never the auth token); `configured` false when none: telephony is off.",
  input: z.strictObject({}),
  output,
  access: access('read', 'settings.telephony.view'),
  toolset: TOOLSET,
  async handler(_input, { db, auth }) {
    return { telephony: serializeTelephonySettings(await settingsRowOf(db, auth.orgId)) };
  },
});

export const updateTelephonySettings = defineTool({
  name: 'update_telephony_settings',
  title: 'Save telephony settings',
  description:
    "Saves the organization's Twilio account after Twilio accepts it (refused: 400; unreachable: 502), " +
    'the token encrypted and never returned. Turns telephony on.',
  input: z.strictObject({
    account_sid: z
      .string()
      .trim()
      .regex(ACCOUNT_SID, 'must be AC followed by 32 lowercase hexadecimal characters')
      .describe('Twilio Account SID'),
    auth_token: z
      .string()
      .trim()
      .regex(AUTH_TOKEN, 'must be 32 lowercase hexadecimal characters')
      .describe('Twilio auth token, never shown again'),
  }),
  output,
  access: access('write', 'settings.telephony.manage'),
  errors: [
    { code: 'telephony_credentials_invalid', when: 'Twilio refused the Account SID and auth token' },
    { code: 'telephony_unavailable', when: 'Twilio could not be reached, did not answer in time or failed' },
    { code: 'conflict', when: 'The Twilio account is already connected to another organization' },
  ],
  reachesWithoutSending:
    "asks the telephony provider whether the organization's account and token are valid; nothing is sent",
  annotations: { openWorldHint: true, idempotentHint: true },
  toolset: TOOLSET,
  // The provider's answer may take seconds: it is awaited outside the request's transaction.
  outside(input, ctx) {
    return verify(
      (credentials) => ctx.services.telephony.verifyAccount(credentials),
      { accountSid: input.account_sid, authToken: input.auth_token },
      ctx.now,
    );
  },
  async handler(_input, ctx) {
    return { telephony: serializeTelephonySettings(await saveTelephonySettings(ctx, ctx.outside)) };
  },
});

export const deleteTelephonySettings = defineTool({
  name: 'delete_telephony_settings',
  title: 'Remove telephony settings',
  description: "Removes the organization's Twilio account: telephony is off until one is saved again.",
  input: z.strictObject({}),
  output: messageOutput,
  access: access('write', 'settings.telephony.manage'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: TOOLSET,
  async handler(_input, { db, auth }) {
    const removed = await removeTelephonySettings(db, auth.orgId);
    return { message: removed ? 'Telephony settings removed' : 'No telephony settings were saved' };
  },
});

export const telephonyTools = [getTelephonySettings, updateTelephonySettings, deleteTelephonySettings];
