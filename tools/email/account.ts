// What the email area needs of a connected account (tools/connected-accounts): the caller's own
// account by id, the SMTP settings with the password decrypted for one call, and the sender address.
// The connected-accounts area owns these rules; this module is the one place the email area reads
// them, so the sender and the scheduling tool agree on whose account may send.
import { and, eq } from 'drizzle-orm';
import type { SmtpAccountSettings } from '../../core/account-mail.ts';
import type { Executor } from '../../core/db/client.ts';
import type { Services } from '../../core/services.ts';
import { type ConnectedAccountRow, connectedAccounts } from '../connected-accounts/tables.ts';

/** The secrets-port context the password is bound to (tools/connected-accounts/tables.ts). */
export function smtpPasswordContext(accountId: string): string {
  return `connected_accounts.smtp_password:${accountId}`;
}

/** The account `id` when it is `userId`'s own in `orgId`; null otherwise (another user's is no different from none). */
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

/** The account's server and login, the password decrypted for this call only. */
export function smtpSettingsOf(services: Services, row: ConnectedAccountRow): SmtpAccountSettings {
  return {
    host: row.smtpHost,
    port: row.smtpPort,
    secure: row.smtpSecure,
    username: row.smtpUsername,
    password: services.secrets.decryptSecret(row.smtpPassword, smtpPasswordContext(row.id)),
  };
}

/** The From of mail sent through the account: `"Display Name" <email>` or the bare address. */
export function senderOf(row: Pick<ConnectedAccountRow, 'email' | 'displayName'>): string {
  if (!row.displayName) return row.email;
  const name = row.displayName.replace(/["\\\r\n]/g, '');
  return `"${name}" <${row.email}>`;
}
