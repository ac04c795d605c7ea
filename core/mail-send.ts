// The 'mail.send' job, the kernel's: sends one outgoing mail of the outbox (core/mail-outbox.ts)
// exactly once, on the leased-row kit (core/leased-rows.ts: claim, fence, retry, sweep). The sending user's account is the connected-accounts area's; it reaches this file
// as an `OutboxAccounts` lookup handed to `mailSendJob` by tools/index.ts.
//
// 1. Claim: one UPDATE moves the row from queued-and-due (or sending with an expired lease: its
//    worker died) to `sending`, adds 1 to `attempts` and sets the lease (`next_attempt_at` = now +
//    5 minutes, SENDER_LEASE). The UPDATE locks the row and re-checks the status, so of two jobs for one row
//    only one claims it; a job for a row already sent, failed or claimed does nothing.
// 2. Send with the row's stable Message-ID through its transport (deliver): the sending user's
//    connected account when the row names one that is still verified, else services.mailer (the
//    `.eml` store by default, SMTP with SMTP_URL). A permanent refusal by the account's server (bad
//    login, refused sender) fails the row at once.
// 3. Record, only while the claim is still ours (status `sending` and the same attempt number):
//    sent (message_id, sent_at), or on error queued again after a backoff (1, then 5 minutes) with
//    the reason, and `failed` after 3 attempts.
//
// The window no transaction closes: the SMTP server accepted the message and this worker died (or
// lost the database) before step 3. The lease expires, the sweeper wakes the row, and the message
// goes out again under the same Message-ID, which receivers use to drop the copy. A claim whose
// lease expired after the last attempt is not retried: the row becomes `failed` ("outcome unknown").
import { sql } from 'drizzle-orm';
import { AccountMailError } from './account-mail.ts';
import { type OutgoingMailRow, outgoingMails } from './db/schema.ts';
import { type DefinedJob, type Sweep, singleAttemptJob } from './jobs.ts';
import {
  claimRow,
  endAbandoned,
  enqueueNextAttempt,
  failureReason,
  leasedTable,
  type RowWakeUp,
  recordIfClaimed,
  retryLater,
  sweepDueRows,
} from './leased-rows.ts';
import type { MailMessage, SentMail } from './mail.ts';
import { mailJobId, mailOfRow, sendMailPayload } from './mail-outbox.ts';
import type { Services } from './services.ts';

/** A user's connected account as the outbox sender needs it. */
export interface OutboxAccount {
  /** Only a verified account sends; another is named as the Reply-To of the system mailer's message. */
  verified: boolean;
  email: string;
  /** Sends through the account's own server, From the account. */
  send(message: MailMessage): Promise<SentMail>;
}

/** Finds the account a row names, in its organization; undefined once it was removed. */
export type OutboxAccounts = (
  services: Services,
  orgId: string,
  accountId: string,
) => Promise<OutboxAccount | undefined>;

/** Without the connected-accounts area: no row's account is found, every mail goes by the system mailer. */
const NO_ACCOUNTS: OutboxAccounts = async () => undefined;

export type SendOutcome = 'sent' | 'retry' | 'failed' | 'skipped';

/** The outbox's lease: SENDER_LEASE (core/leased-rows.ts), 3 attempts, 1 then 5 minutes apart, a 5-minute claim. */
const LEASED = leasedTable(outgoingMails, { due: 'nextAttemptAt', waiting: 'queued', claimed: 'sending' });

/** A row's next attempt: the 'mail.send' job named after the row and attempt (core/mail-outbox.ts). */
const WAKE_UP: RowWakeUp<'mail.send'> = {
  job: 'mail.send',
  jobOf: (row) => ({ payload: { id: row.id }, jobId: mailJobId(row.id, row.attempts) }),
};

/**
 * Rows whose last claim expired after their final attempt: nobody knows whether the message went
 * out, and no attempt is left, so they become `failed`.
 */
function failAbandoned(services: Services, now: Date, id?: string): Promise<number> {
  return endAbandoned(
    services.db.system,
    LEASED,
    { id, now },
    {
      status: 'failed',
      lastError: sql`coalesce(${outgoingMails.lastError} || '; ', '') || ${'the sender stopped during the last attempt; outcome unknown'}`,
      updatedAt: now,
    },
  );
}

/** Writes the outcome if the claim of `row`'s attempt still holds; false when it was taken over. */
async function record(
  services: Services,
  row: OutgoingMailRow,
  set: Partial<typeof outgoingMails.$inferInsert>,
): Promise<boolean> {
  return recordIfClaimed(services.db.system, LEASED, row, set);
}

/**
 * Sends the row's message through its transport. With an `account_id` whose account still exists
 * and is verified: through that account's SMTP server (services.accountMail), From the account's
 * address, the Message-ID on its domain, no Reply-To (replies come to the account itself). Without
 * one, or when the account was removed or lost its verification since the mail was queued: the
 * system mailer (services.mailer), Reply-To the account's address when there still is an account
 * (else the sending user's, stored with the message).
 */
async function deliver(
  services: Services,
  row: OutgoingMailRow,
  accounts: OutboxAccounts,
): Promise<SentMail> {
  const account = row.accountId === null ? undefined : await accounts(services, row.orgId, row.accountId);
  if (account?.verified) {
    const { replyTo: _replyTo, ...message } = mailOfRow(row, account.email);
    return account.send(message);
  }
  const message = mailOfRow(row, services.config.mailFrom);
  if (account) message.replyTo = account.email;
  return services.mailer.send(message);
}

/**
 * The 'mail.send' handler: one attempt at the row if it is due. `now` is the clock (tests pass one
 * to reach a retry's due time without waiting).
 */
export async function sendQueuedMail(
  services: Services,
  id: string,
  options: { now?: Date; accounts?: OutboxAccounts } = {},
): Promise<SendOutcome> {
  const now = options.now ?? new Date();
  const { logger } = services;
  await failAbandoned(services, now, id);
  // Null when it is not due (sent, failed, claimed, not yet time).
  const row = await claimRow(services.db.system, LEASED, { id, now }, { updatedAt: now });
  if (!row) {
    logger.debug({ mail_id: id }, 'outgoing mail not due; job dropped');
    return 'skipped';
  }
  const fields = { mail_id: row.id, org_id: row.orgId, key: row.key, attempt: row.attempts };
  try {
    const sent = await deliver(services, row, options.accounts ?? NO_ACCOUNTS);
    const recorded = await record(services, row, {
      status: 'sent',
      messageId: sent.messageId,
      sentAt: new Date(),
      nextAttemptAt: null,
      lastError: null,
      updatedAt: new Date(),
    });
    if (!recorded) logger.warn(fields, 'outgoing mail sent after its claim expired');
    else
      logger.info(
        { ...fields, message_id: sent.messageId, delivery: services.mailer.delivery },
        'outgoing mail sent',
      );
    return 'sent';
  } catch (err) {
    const why = failureReason(err);
    // A refused login or recipient on the sender's own server will not pass on a retry.
    const permanent = err instanceof AccountMailError && err.permanent;
    if (row.attempts >= LEASED.policy.maxAttempts || permanent) {
      await record(services, row, {
        status: 'failed',
        lastError: why,
        nextAttemptAt: null,
        updatedAt: new Date(),
      });
      logger.warn({ ...fields, error: why }, 'outgoing mail failed; no attempt left');
      return 'failed';
    }
    const { delayMs, row: waiting } = await retryLater(services.db.system, LEASED, row, now, {
      lastError: why,
      updatedAt: new Date(),
    });
    logger.warn({ ...fields, error: why, retry_in_ms: delayMs }, 'outgoing mail failed; will retry');
    if (waiting) {
      const log = { fields, message: 'could not enqueue the next mail attempt' };
      await enqueueNextAttempt(services, WAKE_UP, row, delayMs, log);
    }
    return 'retry';
  }
}

/**
 * Re-wakes outgoing mails that are due (queued past their time, or claimed with an expired lease)
 * by more than `graceMs`, so a job merely waiting in the queue is not doubled; first marks as
 * failed the claims that expired after the last attempt. Returns how many rows were re-enqueued.
 */
export async function sweepDueMails(services: Services, graceMs: number, now = new Date()): Promise<number> {
  await failAbandoned(services, now);
  return sweepDueRows(services, LEASED, WAKE_UP, { what: 'outgoing mails', graceMs, now });
}

/**
 * The outbox's job, sending through the accounts `accounts` finds. One attempt per job: the row
 * schedules its own retries (see sendQueuedMail).
 */
export function mailSendJob(accounts: OutboxAccounts): DefinedJob {
  return singleAttemptJob({
    name: 'mail.send',
    payload: sendMailPayload,
    run: (services, { id }) => sendQueuedMail(services, id, { accounts }),
  });
}

export const mailSweep: Sweep = {
  name: 'outgoing mail',
  run: (services, graceMs) => sweepDueMails(services, graceMs),
};
