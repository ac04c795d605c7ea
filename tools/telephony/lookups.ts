// Questions other areas ask of the organization's telephony account (docs/architecture.md
// "Boundaries"): its credentials for a provider call, the refusal when it has none, and, for the
// provider's public hooks, which organization an Account SID belongs to.
import { eq } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { AppError } from '../../core/errors.ts';
import type { Services } from '../../core/services.ts';
import type { TelephonyCredentials } from '../../core/telephony.ts';
import { authTokenOf, settingsRowOf } from './store.ts';
import { telephonySettings } from './tables.ts';

/**
 * The organization's provider credentials, the auth token decrypted for this call (never store or
 * log it), or null when the organization saved none. `db` is the caller's tenant transaction.
 */
export async function telephonyCredentialsOf(
  db: Executor,
  services: Pick<Services, 'secrets'>,
  orgId: string,
): Promise<TelephonyCredentials | null> {
  const row = await settingsRowOf(db, orgId);
  return row ? { accountSid: row.accountSid, authToken: authTokenOf(services, row) } : null;
}

/** The 409 `telephony_not_configured` a tool answers when the organization has no provider account. */
function telephonyNotConfigured(): AppError {
  return new AppError('telephony_not_configured', {
    message:
      'Telephony is off for this organization: save its Twilio credentials with PUT /api/v1/settings/telephony first',
  });
}

/** The organization's credentials, or the 409 `telephony_not_configured` when it has none. */
export async function requireTelephony(
  db: Executor,
  services: Pick<Services, 'secrets'>,
  orgId: string,
): Promise<TelephonyCredentials> {
  const credentials = await telephonyCredentialsOf(db, services, orgId);
  if (!credentials) throw telephonyNotConfigured();
  return credentials;
}

/**
 * The organization an Account SID belongs to, and its auth token decrypted (to check the hook's
 * signature), or null. Found without a tenant, as a provider hook must: `db` is the system handle
 * (`services.db.system`), the way the proposals' public page finds its proposal by token; the table
 * keeps its row-level security for every tenant transaction.
 */
export async function organizationOfAccount(
  db: Executor,
  services: Pick<Services, 'secrets'>,
  accountSid: string,
): Promise<{ orgId: string; authToken: string } | null> {
  const [row] = await db.select().from(telephonySettings).where(eq(telephonySettings.accountSid, accountSid));
  return row ? { orgId: row.orgId, authToken: authTokenOf(services, row) } : null;
}
