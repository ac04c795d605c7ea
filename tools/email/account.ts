// What the email area needs of a connected account, from the connected-accounts area that owns the
// rules: the caller's own account by id, the SMTP settings with the password decrypted for one call,
// and the sender address. One import point, so the scheduling tool and the sender agree.
export { getOwnAccount, senderOf, smtpSettingsOf } from '../connected-accounts/store.ts';

/** The secrets-port context the SMTP password is bound to (tools/connected-accounts/tables.ts). */
export function smtpPasswordContext(accountId: string): string {
  return `connected_accounts.smtp_password:${accountId}`;
}
