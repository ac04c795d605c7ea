// What the kernel's mail outbox sender (core/mail-send.ts) needs of a user's connected account: whether
// it is verified, its address, and a send through its own SMTP server, From the account. tools/index.ts
// hands this lookup to the kernel's jobs, so the kernel reads no table of this area.
import { and, eq } from 'drizzle-orm';
import type { OutboxAccounts } from '../../core/mail-send.ts';
import { senderOf, smtpSettingsOf } from './store.ts';
import { connectedAccounts } from './tables.ts';

export const outboxAccounts: OutboxAccounts = async (services, orgId, id) => {
  const [account] = await services.db.system
    .select()
    .from(connectedAccounts)
    .where(and(eq(connectedAccounts.id, id), eq(connectedAccounts.orgId, orgId)))
    .limit(1);
  if (!account) return undefined;
  return {
    verified: account.status === 'verified',
    email: account.email,
    send: (message) =>
      services.accountMail.send(smtpSettingsOf(services, account), { ...message, from: senderOf(account) }),
  };
};
