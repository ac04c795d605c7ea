// Follow-ups of sent email: when a scheduled email with `follow_up` gets no reply by its
// `follow_up_due_at`, a task for the sender ("Follow up: <subject> (no reply from <to>)", task.created).
// The row is the truth: `follow_up_status` pending -> created (the task exists) or cancelled (a reply
// came, or nobody is left to follow up). The pass over due rows (createDueFollowUps) runs with the
// runtime's sweeper loop (followUpSweep, declared in index.ts), so a restart loses nothing: it finds what is due when it runs again.
// A reply cancels through the area's emailReceived hook (cancelFollowUpsOnReply).
import { and, eq, lte, or, sql } from 'drizzle-orm';
import type { InboundEmailFacts, SystemHookContext } from '../../core/area.ts';
import type { Sweep } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { actorAuth, actorContext } from '../../core/system-actor.ts';
import { isLiveLead } from '../leads/lookups.ts';
import { insertTask } from '../tasks/store.ts';
import { type ScheduledEmailRow, scheduledEmails } from './tables.ts';

const UNIT_MS = { hours: 3_600_000, days: 86_400_000 } as const;

/** When the follow-up of a mail sent at `sentAt` is due; null without a follow-up. */
export function followUpDueAt(row: Pick<ScheduledEmailRow, 'followUp'>, sentAt: Date): Date | null {
  if (!row.followUp) return null;
  return new Date(sentAt.getTime() + row.followUp.amount * UNIT_MS[row.followUp.unit]);
}

function followUpText(row: Pick<ScheduledEmailRow, 'subject' | 'toAddress'>): string {
  const subject = row.subject.length > 400 ? `${row.subject.slice(0, 400)}...` : row.subject;
  return `Follow up: ${subject} (no reply from ${row.toAddress})`;
}

/**
 * The emailReceived hook: a reply cancels the pending follow-up of the email it answers (by
 * In-Reply-To) and those of pending emails to the same lead whose recipient is the reply's sender.
 */
export async function cancelFollowUpsOnReply(
  ctx: SystemHookContext,
  email: InboundEmailFacts,
): Promise<void> {
  const matches = [];
  if (email.repliesToEmailId) matches.push(eq(scheduledEmails.id, email.repliesToEmailId));
  if (email.leadId) {
    const sameSender = and(
      eq(scheduledEmails.leadId, email.leadId),
      sql`lower(${scheduledEmails.toAddress}) = ${email.fromAddress.toLowerCase()}`,
    );
    if (sameSender) matches.push(sameSender);
  }
  if (matches.length === 0) return;
  await ctx.db
    .update(scheduledEmails)
    .set({ followUpStatus: 'cancelled', updatedAt: ctx.now })
    .where(
      and(
        eq(scheduledEmails.orgId, ctx.orgId),
        eq(scheduledEmails.followUpStatus, 'pending'),
        or(...matches),
      ),
    );
}

const FOLLOW_UP_BATCH = 200;

/**
 * Creates the tasks of follow-ups due by `now` (each in its organization's transaction, the row
 * locked and re-checked so two passes never create two tasks). A follow-up whose sender is no
 * longer an active user, or whose lead is gone, is cancelled instead. Returns the tasks created.
 */
export async function createDueFollowUps(services: Services, now = new Date()): Promise<number> {
  const due = await services.db.system
    .select({ id: scheduledEmails.id, orgId: scheduledEmails.orgId })
    .from(scheduledEmails)
    .where(and(eq(scheduledEmails.followUpStatus, 'pending'), lte(scheduledEmails.followUpDueAt, now)))
    .orderBy(scheduledEmails.followUpDueAt)
    .limit(FOLLOW_UP_BATCH);
  let created = 0;
  for (const { id, orgId } of due) {
    const made = await services.db.withTenant(orgId, async (tx) => {
      const [row] = await tx
        .select()
        .from(scheduledEmails)
        .where(
          and(
            eq(scheduledEmails.id, id),
            eq(scheduledEmails.followUpStatus, 'pending'),
            lte(scheduledEmails.followUpDueAt, now),
          ),
        )
        .for('update');
      if (!row) return false;
      const auth = await actorAuth(tx, orgId, row.userId);
      const leadLive = await isLiveLead(tx, orgId, row.leadId);
      if (!auth || !leadLive) {
        await tx
          .update(scheduledEmails)
          .set({ followUpStatus: 'cancelled', updatedAt: now })
          .where(eq(scheduledEmails.id, row.id));
        services.logger.info(
          { email_id: row.id, org_id: orgId },
          'follow-up cancelled: the sender is no longer active or the lead is gone',
        );
        return false;
      }
      const task = await insertTask(actorContext(tx, auth, now), {
        text: followUpText(row),
        leadId: row.leadId,
        dueAt: now,
      });
      await tx
        .update(scheduledEmails)
        .set({ followUpStatus: 'created', followUpTaskId: task._id, updatedAt: now })
        .where(eq(scheduledEmails.id, row.id));
      return true;
    });
    if (made) created += 1;
  }
  if (created > 0) services.logger.info({ count: created }, 'follow-up tasks created');
  return created;
}

/** Follow-up tasks that came due: the row is the truth, so a pass after a restart finds what a stopped one missed. */
export const followUpSweep: Sweep = {
  name: 'email follow-ups',
  run: (services) => createDueFollowUps(services),
};
