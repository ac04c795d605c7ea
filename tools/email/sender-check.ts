// Whether a user may still send mail through a connected account, asked at the last moment: by a
// workflow's email step when it writes its email (tools/workflows/steps-runner.ts) and by the sender of
// scheduled email right before the SMTP session (sender.ts). Both act for a user long
// after the request that set them going, so what held then (an active user whose role sends e-mail,
// an account of theirs that passed verification) is read again now; a user deactivated or demoted,
// or an account that failed or lost its verification since, refuses the send with the reason
// (docs/security.md "Workflows and scheduled email").
import { roleHolds } from '../../core/access.ts';
import type { Executor } from '../../core/db/client.ts';
import { actorAuth } from '../../core/system-actor.ts';
import { type ConnectedAccountRow, getOwnAccount } from '../connected-accounts/store.ts';
import { emailCatalogue } from './catalogue.ts';

export type SenderCheck = { ok: true; account: ConnectedAccountRow } | { ok: false; reason: string };

/**
 * The account `accountId` of `userId` when the user may send through it now, else why not: the
 * account removed (or never theirs), the user no longer an active user of the organization, their
 * role no longer holding `email.send`, the account not `verified`. Read in the caller's tenant
 * transaction.
 */
export async function checkSender(
  db: Executor,
  orgId: string,
  userId: string,
  accountId: string | null,
): Promise<SenderCheck> {
  const account = accountId ? await getOwnAccount(db, orgId, userId, accountId) : null;
  if (!account) return { ok: false, reason: 'the connected account was removed' };
  const auth = await actorAuth(db, orgId, userId);
  if (!auth) return { ok: false, reason: 'the sender is no longer an active user of the organization' };
  if (!roleHolds(auth.role, emailCatalogue.permissions['email.send'])) {
    return { ok: false, reason: `the sender's role (${auth.role}) no longer allows sending e-mail` };
  }
  if (account.status !== 'verified') {
    return { ok: false, reason: `the connected account is not verified (status ${account.status})` };
  }
  return { ok: true, account };
}
