// The 'email.send' job: sends one scheduled email (tools/email) through its sender's connected
// account, exactly once, on the leased-row kit (core/leased-rows.ts) like the mail outbox.
//
// 1. Claim: one UPDATE moves the row from scheduled-and-due (or sending with an expired lease: its
//    worker died) to `sending`, adds 1 to `attempts` and sets the lease (`next_attempt_at` = now +
//    5 minutes, SENDER_LEASE). Of two jobs for one row only one claims it; a cancelled, sent or failed row,
//    or one not yet due, is left alone.
// 2. Check what the send needs, failing at once with the reason (no retry can help): the lead live,
//    the sender still allowed to send through the account (tools/email/sender-check.ts: the account
//    theirs and verified, they an active user whose role holds `email.send`; the emailSent hooks
//    hear the refusal: a workflow's enrollment fails with the same reason), every attachment an upload of the row's organization,
//    in storage with the size it was scheduled with.
// 3. Send through services.accountMail with the row's stable Message-ID
//    (`<scheduled-email-<id>@<account domain>>`).
// 4. Record, in one tenant transaction and only while the claim holds (status `sending`, same
//    attempt): sent (message_id, sent_at), the outgoing email activity on the lead (as the sender),
//    the follow-up's due time, what the emailSent hooks do (core/area.ts: tools/workflows enrolls
//    the lead), and `email.sent`. A failure is retried
//    after 1 then 5 minutes; a permanent one, or the third, ends `failed` with the reason and
//    `email.sent` with status `failed`.
//
// The window no transaction closes (the server accepted the message, the worker died before step
// 4) sends the message again after the lease, under the same Message-ID: docs/email.md.
import { eq } from 'drizzle-orm';
import { AccountMailError } from '../../core/account-mail.ts';
import type { EmailSentResult, SystemHookContext } from '../../core/area.ts';
import type { Executor } from '../../core/db/client.ts';
import { type EventPayload, recordEvent } from '../../core/events.ts';
import { type DefinedJob, type Sweep, singleAttemptJob } from '../../core/jobs.ts';
import {
  abandonedClaims,
  claimRow,
  enqueueNextAttempt,
  failureReason,
  leasedTable,
  type RowWakeUp,
  retryLater,
  sweepDueRows,
  writeIfClaimed,
} from '../../core/leased-rows.ts';
import type { MailMessage } from '../../core/mail.ts';
import type { Services } from '../../core/services.ts';
import { actorAuth, actorContext } from '../../core/system-actor.ts';
import { insertActivity } from '../activities/store.ts';
import type { ConnectedAccountRow } from '../connected-accounts/store.ts';
import { senderOf, smtpSettingsOf } from '../connected-accounts/store.ts';
import { isContactOfLead } from '../contacts/store.ts';
import { isUploadKeyOf } from '../files/store.ts';
import { isLiveLead } from '../leads/lookups.ts';
import { followUpDueAt } from './follow-ups.ts';
import type { EmailHooks } from './hooks.ts';
import { emailJobId, sendEmailPayload } from './schedule.ts';
import { checkSender } from './sender-check.ts';
import { serializeScheduledEmail } from './store.ts';
import { type ScheduledEmailRow, scheduledEmails } from './tables.ts';

export type EmailSendOutcome = 'sent' | 'retry' | 'failed' | 'skipped';

export interface SendEmailOptions {
  /** The clock (tests pass one to reach a due time without waiting). */
  now?: Date;
}

/** A failure no other attempt can cure: the row fails at once. */
class PermanentSendError extends Error {}

/** The sender's lease: SENDER_LEASE (core/leased-rows.ts), 3 attempts, 1 then 5 minutes apart, a 5-minute claim. */
const LEASED = leasedTable(scheduledEmails, {
  due: 'nextAttemptAt',
  waiting: 'scheduled',
  claimed: 'sending',
});

/** A row's next attempt: the 'email.send' job named after the row and attempt (schedule.ts). */
const WAKE_UP: RowWakeUp<'email.send'> = {
  job: 'email.send',
  jobOf: (row) => ({ payload: { id: row.id }, jobId: emailJobId(row.id, row.attempts) }),
};

/** The Message-ID of a row's mail, the same on every attempt. */
function scheduledMessageId(id: string, accountEmail: string): string {
  const domain = accountEmail.split('@')[1] || 'localhost';
  return `<scheduled-email-${id}@${domain}>`;
}

/** `email.sent`'s payload: the scheduled email as the API shows it, with the reason of a failure. */
function sentPayload(row: ScheduledEmailRow): EventPayload<'email.sent'> {
  const record = serializeScheduledEmail(row);
  return row.status === 'failed' ? { ...record, reason: row.lastError } : record;
}

/**
 * Writes the final `failed` with the reason and `email.sent` (status failed), only while the claim
 * of attempt `attempt` holds (or, with attempt null, while the row is an expired last claim).
 */
async function recordFailure(
  services: Services,
  hooks: EmailHooks,
  row: Pick<ScheduledEmailRow, 'id' | 'orgId' | 'attempts'>,
  reason: string,
  now: Date,
  options: { senderRefused?: boolean } = {},
): Promise<boolean> {
  return services.db.withTenant(row.orgId, async (tx) => {
    const failed = await writeIfClaimed(tx, LEASED, row, {
      status: 'failed',
      lastError: reason,
      nextAttemptAt: null,
      updatedAt: now,
    });
    if (!failed) return false;
    const ctx = hookContext(services, tx, row.orgId, now);
    for (const hook of hooks.emailSent()) {
      await hook.failed(ctx, {
        emailId: failed.id,
        workflowEnrollmentId: failed.workflowEnrollmentId,
        workflowStep: failed.workflowStep,
        reason,
        senderRefused: options.senderRefused === true,
      });
    }
    await recordEvent(tx, row.orgId, 'email.sent', sentPayload(failed));
    return true;
  });
}

/** What the sent-email hooks get: the recording transaction of the row's organization. */
function hookContext(services: Services, tx: Executor, orgId: string, now: Date): SystemHookContext {
  return {
    db: tx,
    orgId,
    now,
    services,
    emit: async (event, data) => void (await recordEvent(tx, orgId, event, data)),
  };
}

/** Claims whose lease expired after the last attempt: nobody knows whether the mail went out. */
async function failAbandoned(services: Services, hooks: EmailHooks, now: Date, id?: string): Promise<number> {
  const rows = await services.db.system
    .select({ id: scheduledEmails.id, orgId: scheduledEmails.orgId, attempts: scheduledEmails.attempts })
    .from(scheduledEmails)
    .where(abandonedClaims(LEASED, now, id))
    .limit(100);
  let failed = 0;
  for (const row of rows) {
    if (
      await recordFailure(
        services,
        hooks,
        row,
        'the sender stopped during the last attempt; outcome unknown',
        now,
      )
    )
      failed += 1;
  }
  return failed;
}

/**
 * A sender check that failed (tools/email/sender-check.ts): the row fails, and the workflow enrollment
 * that wrote it, still active, fails too with the same reason (its later emails would meet the same
 * refusal; docs/email.md "Workflows").
 */
class SenderRefused extends PermanentSendError {}

/**
 * The account and a check that the send may go ahead, right before the SMTP session: the lead live,
 * and the sender may still send through the account (the account theirs, they an active user whose
 * role holds `email.send`, the account verified). Throws PermanentSendError with the reason otherwise.
 */
async function checkSendable(services: Services, row: ScheduledEmailRow): Promise<ConnectedAccountRow> {
  return services.db.withTenant(row.orgId, async (tx) => {
    if (!(await isLiveLead(tx, row.orgId, row.leadId)))
      throw new PermanentSendError('the lead was deleted before the email was sent');
    const sender = await checkSender(tx, row.orgId, row.userId, row.connectedAccountId);
    if (!sender.ok) throw new SenderRefused(sender.reason);
    return sender.account;
  });
}

/** The mail as the account sends it, attachments read from storage now. */
async function composeMessage(
  services: Services,
  row: ScheduledEmailRow,
  account: ConnectedAccountRow,
): Promise<MailMessage & { from: string }> {
  const attachments = [];
  for (const a of row.attachments) {
    // Checked again as at scheduling (tools/files/store.ts): only an attachment upload of the row's
    // organization, with the size it was scheduled with, is ever read from the shared store.
    if (!isUploadKeyOf(row.orgId, 'attachment', a.storage_key))
      throw new PermanentSendError(
        `attachment ${a.filename} is not an upload of this organization (${a.storage_key})`,
      );
    const file = await services.files.get(a.storage_key);
    if (!file)
      throw new PermanentSendError(`attachment ${a.filename} not found in storage (${a.storage_key})`);
    if (file.size !== a.size_bytes) {
      await file.body.cancel();
      throw new PermanentSendError(
        `attachment ${a.filename} has ${file.size} bytes in storage, not the ${a.size_bytes} it was scheduled with`,
      );
    }
    attachments.push({
      filename: a.filename,
      contentType: a.content_type,
      content: Buffer.from(await new Response(file.body).arrayBuffer()),
    });
  }
  const message: MailMessage & { from: string } = {
    from: senderOf(account),
    to: row.toAddress,
    subject: row.subject,
    html: row.bodyHtml,
    messageId: scheduledMessageId(row.id, account.email),
  };
  if (row.cc.length > 0) message.cc = row.cc;
  if (row.bcc.length > 0) message.bcc = row.bcc;
  if (row.bodyText !== null) message.text = row.bodyText;
  if (attachments.length > 0) message.attachments = attachments;
  return message;
}

/**
 * Records the success while the claim holds: the row sent, the activity, the follow-up's due time,
 * what the sent-email hooks do (the enrollment) and `email.sent`, in one transaction. Returns the
 * hooks' work after the commit, or recorded false when the claim was lost.
 */
async function recordSent(
  services: Services,
  hooks: EmailHooks,
  row: ScheduledEmailRow,
  account: ConnectedAccountRow,
  messageId: string,
  now: Date,
): Promise<{ recorded: boolean; afterCommit: (() => Promise<void>)[] }> {
  return services.db.withTenant(row.orgId, async (tx) => {
    const sent = await writeIfClaimed(tx, LEASED, row, {
      status: 'sent',
      messageId,
      sentAt: now,
      nextAttemptAt: null,
      lastError: null,
      updatedAt: now,
    });
    if (!sent) return { recorded: false, afterCommit: [] };
    const auth = await actorAuth(tx, row.orgId, row.userId);
    const leadLive = await isLiveLead(tx, row.orgId, row.leadId);
    const set: Partial<typeof scheduledEmails.$inferInsert> = {};
    // The sender or the lead may have gone during the send: the mail went out, so the row says sent;
    // there is then no one to log it for, or nowhere to log it.
    if (auth && leadLive) {
      const contactId =
        row.contactId && (await isContactOfLead(tx, row.orgId, row.contactId, row.leadId))
          ? row.contactId
          : null;
      const activity = await insertActivity(actorContext(tx, auth, now), {
        type: 'email',
        lead_id: row.leadId,
        contact_id: contactId,
        direction: 'outbound',
        subject: row.subject.slice(0, 998),
        body_text: row.bodyText,
        from: account.email,
        to: [row.toAddress, ...row.cc],
        occurred_at: now.toISOString(),
      });
      set.activityId = activity._id;
      const dueAt = followUpDueAt(row, now);
      if (dueAt) {
        set.followUpDueAt = dueAt;
        set.followUpStatus = 'pending';
      }
    }
    const results: EmailSentResult[] = [];
    const ctx = hookContext(services, tx, row.orgId, now);
    for (const hook of hooks.emailSent()) {
      results.push(
        await hook.sent(ctx, {
          emailId: row.id,
          leadId: row.leadId,
          contactId: row.contactId,
          userId: row.userId,
          connectedAccountId: account.id,
          leadLive,
          enrollInWorkflowId: row.enrollInWorkflowId,
        }),
      );
    }
    for (const result of results) {
      if (result.enrollmentId) set.enrollmentId = result.enrollmentId;
      if (result.note) set.lastError = result.note;
    }
    let final = sent;
    if (Object.keys(set).length > 0) {
      const [updated] = await tx
        .update(scheduledEmails)
        .set(set)
        .where(eq(scheduledEmails.id, row.id))
        .returning();
      if (updated) final = updated;
    }
    await recordEvent(tx, row.orgId, 'email.sent', sentPayload(final));
    return { recorded: true, afterCommit: results.flatMap((r) => (r.afterCommit ? [r.afterCommit] : [])) };
  });
}

/** Puts a failed attempt back to `scheduled` after its backoff, while the claim holds; wakes its job. */
async function scheduleRetry(
  services: Services,
  row: ScheduledEmailRow,
  reason: string,
  now: Date,
): Promise<void> {
  const { delayMs, row: again } = await retryLater(services.db.system, LEASED, row, now, {
    lastError: reason,
    updatedAt: now,
  });
  if (!again) return;
  const log = { fields: { email_id: row.id }, message: 'could not enqueue the next email attempt' };
  await enqueueNextAttempt(services, WAKE_UP, row, delayMs, log);
}

/** The 'email.send' handler: one attempt at the row if it is due. */
export async function sendScheduledEmail(
  services: Services,
  hooks: EmailHooks,
  id: string,
  options: SendEmailOptions = {},
): Promise<EmailSendOutcome> {
  const now = options.now ?? new Date();
  const { logger } = services;
  await failAbandoned(services, hooks, now, id);
  // Null when it is not due (cancelled, sent, failed, claimed, not yet time).
  const row = await claimRow(services.db.system, LEASED, { id, now }, { updatedAt: now });
  if (!row) {
    logger.debug({ email_id: id }, 'scheduled email not due; job dropped');
    return 'skipped';
  }
  const fields = { email_id: row.id, org_id: row.orgId, attempt: row.attempts };
  let account: ConnectedAccountRow;
  let sentId: string;
  try {
    account = await checkSendable(services, row);
    const message = await composeMessage(services, row, account);
    sentId = (await services.accountMail.send(smtpSettingsOf(services, account), message)).messageId;
  } catch (err) {
    const reason = failureReason(err);
    const permanent = err instanceof PermanentSendError || (err instanceof AccountMailError && err.permanent);
    if (permanent || row.attempts >= LEASED.policy.maxAttempts) {
      await recordFailure(services, hooks, row, reason, now, { senderRefused: err instanceof SenderRefused });
      logger.warn({ ...fields, error: reason, permanent }, 'scheduled email failed');
      return 'failed';
    }
    await scheduleRetry(services, row, reason, now);
    logger.warn({ ...fields, error: reason }, 'scheduled email attempt failed; will retry');
    return 'retry';
  }
  const { recorded, afterCommit } = await recordSent(services, hooks, row, account, sentId, now);
  if (!recorded) {
    logger.warn(fields, 'scheduled email sent after its claim expired');
    return 'sent';
  }
  logger.info({ ...fields, message_id: sentId }, 'scheduled email sent');
  for (const work of afterCommit) await work();
  return 'sent';
}

/**
 * Re-wakes scheduled emails that are due (scheduled past their time, or claimed with an expired
 * lease) by more than `graceMs`; first fails the claims that expired after the last attempt.
 */
export async function sweepDueEmails(
  services: Services,
  hooks: EmailHooks,
  graceMs: number,
  now = new Date(),
): Promise<number> {
  await failAbandoned(services, hooks, now);
  return sweepDueRows(services, LEASED, WAKE_UP, { what: 'scheduled emails', graceMs, now });
}

/** One attempt per job: the row schedules its own retries (see sendScheduledEmail). */
export function sendEmailJob(hooks: EmailHooks): DefinedJob {
  return singleAttemptJob({
    name: 'email.send',
    payload: sendEmailPayload,
    run: (services, { id }) => sendScheduledEmail(services, hooks, id),
  });
}

/** Scheduled emails due but not woken (or whose sender died holding the claim). */
export function emailSweep(hooks: EmailHooks): Sweep {
  return { name: 'scheduled email', run: (services, graceMs) => sweepDueEmails(services, hooks, graceMs) };
}
