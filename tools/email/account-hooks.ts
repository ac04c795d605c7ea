// What scheduled email does for the connected-accounts area, declared as its hooks (core/area.ts
// `replyTargets`, `accountRemoved`) so that area reads none of these tables: a reply's In-Reply-To
// names one of our sent emails (its lead then gets the reply even from an address no contact has),
// and an account's removal cancels its emails that have not started sending.
import { and, desc, eq, inArray } from 'drizzle-orm';
import type { AccountRemovedHook, ReplyTargetHook } from '../../core/area.ts';
import { isLiveLead } from '../leads/lookups.ts';
import { scheduledEmails } from './tables.ts';

/** The last error of an email cancelled because its account was removed. */
const ACCOUNT_REMOVED = 'connected account removed';

/** The scheduled email of the organization one of these Message-IDs names, with its lead if live. */
export const repliedScheduledEmail: ReplyTargetHook = async (db, orgId, messageIds) => {
  const [row] = await db
    .select({ id: scheduledEmails.id, leadId: scheduledEmails.leadId })
    .from(scheduledEmails)
    .where(and(eq(scheduledEmails.orgId, orgId), inArray(scheduledEmails.messageId, [...messageIds])))
    .orderBy(desc(scheduledEmails.sentAt))
    .limit(1);
  if (!row) return null;
  return { id: row.id, leadId: (await isLiveLead(db, orgId, row.leadId)) ? row.leadId : null };
};

/** Cancels the account's scheduled emails that have not started sending (they could only fail later). */
export const cancelEmailsOfAccount: AccountRemovedHook = async (ctx, accountId) => {
  const cancelled = await ctx.db
    .update(scheduledEmails)
    .set({
      status: 'cancelled',
      cancelledAt: ctx.now,
      nextAttemptAt: null,
      lastError: ACCOUNT_REMOVED,
      updatedAt: ctx.now,
    })
    .where(
      and(
        eq(scheduledEmails.orgId, ctx.auth.orgId),
        eq(scheduledEmails.connectedAccountId, accountId),
        eq(scheduledEmails.status, 'scheduled'),
      ),
    )
    .returning({ id: scheduledEmails.id });
  return cancelled.length;
};
