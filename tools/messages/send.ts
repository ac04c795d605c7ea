// Sending a message, exactly once, on the leased-row kit (core/leased-rows.ts), as the scheduled
// email sender does (tools/email/sender.ts):
//
// 1. Check (checkSend): telephony on for the organization (else the telephony area's 409), the
//    number a live number of the organization with the channel's capability (else 400 naming
//    from_phone_number_id), the lead live (else 400 naming lead_id), and for a free-form WhatsApp
//    message the 24-hour window: the recipient sent an inbound WhatsApp message in the last 24 hours
//    (else 400 naming template_sid: only an approved template may go out).
// 2. Queue (queueMessage), in the caller's transaction: the message row `queued`, due now, and its
//    activity (type sms or whatsapp) on the lead. After the commit the caller wakes the
//    'messages.send' job (wakeMessage) as the safety net, and a request attempts at once itself
//    (attemptMessage): the route answers with the provider's SID and status.
// 3. Attempt (attemptMessage): claim the row (only from `queued`: a claim whose lease expired is
//    never taken again, see 5), send through services.telephony with the status callback
//    /hooks/twilio/status, and record while the claim holds: accepted (sid, the provider's status,
//    `sms.sent`), refused (`failed` with the provider's code and sentence), refused for now
//    (`retry`: back to `queued` after 1 then 5 minutes, the job woken; the third ends failed), or
//    outcome unknown (`unknown`, never resent: the provider may have taken it).
// 4. A lost wake-up: the sweep wakes queued rows due by more than the grace.
// 5. A sender that died during its attempt leaves a `sending` claim: once its lease expired, the
//    sweep (or the next job for the row) ends it `unknown` rather than send a second time.
import { and, eq, lte, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { AppError, type ErrorDetail, validationError } from '../../core/errors.ts';
import { recordEvent } from '../../core/events.ts';
import { newId } from '../../core/ids.ts';
import { type DefinedJob, type Sweep, singleAttemptJob } from '../../core/jobs.ts';
import {
  claimRow,
  enqueueNextAttempt,
  failureReason,
  leasedTable,
  type RowWakeUp,
  retryLater,
  sweepDueRows,
  writeIfClaimed,
} from '../../core/leased-rows.ts';
import type { RecordContext } from '../../core/records.ts';
import type { Services } from '../../core/services.ts';
import { type OutboundMessage, TelephonyError } from '../../core/telephony.ts';
import { insertActivity } from '../activities/store.ts';
import { isLiveLead } from '../leads/lookups.ts';
import { firstNumberWith, liveNumberOf } from '../phone-numbers/lookups.ts';
import { requireTelephony, telephonyCredentialsOf } from '../telephony/lookups.ts';
import { hookUrl } from '../telephony/signature.ts';
import { type Channel, lastInboundWhatsapp, serializeMessage } from './store.ts';
import { type MessageRow, messages } from './tables.ts';

/** A queued message row, for the areas that send through this one (workflows). */
export type QueuedMessage = MessageRow;

const sendMessagePayload = z.object({
  id: z.string().describe('The messages row to send'),
});

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** Send one queued message through the organization's provider account, if it is still due. */
    'messages.send': z.output<typeof sendMessagePayload>;
  }
}

/** The hook the provider posts message (and later call) statuses to. */
export const STATUS_HOOK_PATH = '/hooks/twilio/status';

/** How long after an inbound WhatsApp message a free-form one may be sent (Meta's customer-care window). */
const WHATSAPP_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The sender's lease: SENDER_LEASE, 3 attempts 1 then 5 minutes apart, a 5-minute claim. */
const LEASED = leasedTable(messages, { due: 'nextAttemptAt', waiting: 'queued', claimed: 'sending' });

function messageJobId(id: string, attemptsMade: number): string {
  return attemptsMade === 0 ? `message-${id}` : `message-${id}-${attemptsMade + 1}`;
}

const WAKE_UP: RowWakeUp<'messages.send'> = {
  job: 'messages.send',
  jobOf: (row) => ({ payload: { id: row.id }, jobId: messageJobId(row.id, row.attempts) }),
};

export interface MessageToSend {
  channel: Channel;
  leadId: string;
  /** E.164. */
  to: string;
  fromPhoneNumberId: string;
  body: string;
  templateSid?: string | null | undefined;
  templateVariables?: Record<string, string> | null | undefined;
}

/**
 * The refusals of a send (see the module comment, 1), in the caller's tenant transaction; answers
 * the number it goes out from (E.164).
 */
export async function checkSend(
  db: Executor,
  services: Pick<Services, 'secrets'>,
  orgId: string,
  message: MessageToSend,
  now: Date,
): Promise<{ from: string }> {
  await requireTelephony(db, services, orgId);
  const number = await liveNumberOf(db, orgId, message.fromPhoneNumberId);
  const problems: ErrorDetail[] = [];
  if (!number?.capabilities[message.channel]) {
    problems.push({
      field: 'from_phone_number_id',
      message: `must be the id of a live phone number of this organization that carries ${message.channel === 'sms' ? 'SMS' : 'WhatsApp'}`,
      code: 'invalid_phone_number',
    });
  }
  if (!(await isLiveLead(db, orgId, message.leadId))) {
    problems.push({
      field: 'lead_id',
      message: 'must be the id of a live lead of this organization',
      code: 'invalid_reference',
    });
  }
  if (problems.length > 0 || !number) throw validationError(problems);
  if (message.channel === 'whatsapp' && !message.templateSid) {
    const since = new Date(now.getTime() - WHATSAPP_WINDOW_MS);
    if (!(await lastInboundWhatsapp(db, orgId, message.to, since))) {
      throw validationError([
        {
          field: 'template_sid',
          message: `is required: ${message.to} has not written on WhatsApp in the last 24 hours, so only an approved template (HX...) may be sent`,
          code: 'whatsapp_window_closed',
        },
      ]);
    }
  }
  return { from: number.number };
}

/**
 * Writes the message `queued` (due now) and its outbound activity on the lead, in the caller's
 * transaction (see the module comment, 2). The caller checked it (checkSend) in the same transaction.
 */
export async function queueMessage(
  ctx: RecordContext,
  message: MessageToSend,
  from: string,
): Promise<MessageRow> {
  const activity = await insertActivity(ctx, {
    type: message.channel,
    lead_id: message.leadId,
    direction: 'outbound',
    body_text: message.body,
    phone: message.to,
    occurred_at: ctx.now.toISOString(),
  });
  const [row] = await ctx.db
    .insert(messages)
    .values({
      id: newId(ctx.now),
      orgId: ctx.auth.orgId,
      channel: message.channel,
      direction: 'outbound',
      leadId: message.leadId,
      phoneNumberId: message.fromPhoneNumberId,
      fromAddress: from,
      toAddress: message.to,
      body: message.body,
      templateSid: message.templateSid ?? null,
      templateVariables: message.templateVariables ?? null,
      status: 'queued',
      nextAttemptAt: ctx.now,
      userId: ctx.auth.userId,
      createdBy: ctx.auth.userId,
      activityId: activity._id,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  if (!row) throw new Error('insert returned no message');
  return row;
}

/**
 * The safety net of a queued message: its 'messages.send' job after a lease's length (the request's
 * own attempt has long ended by then, so the job finds it sent and drops). A failed enqueue is
 * logged: the sweep finds the row.
 */
export async function wakeMessage(services: Services, row: MessageRow): Promise<void> {
  const log = { fields: { message_id: row.id }, message: 'could not enqueue the message job' };
  await enqueueNextAttempt(services, WAKE_UP, { id: row.id, attempts: 0 }, LEASED.policy.leaseMs, log);
}

/** The channel address of a number: `whatsapp:+1...` on WhatsApp. */
function address(channel: Channel, e164: string): string {
  return channel === 'whatsapp' ? `whatsapp:${e164}` : e164;
}

function outboundOf(services: Services, row: MessageRow): OutboundMessage {
  const message: OutboundMessage = {
    to: address(row.channel, row.toAddress),
    from: address(row.channel, row.fromAddress),
    statusCallback: hookUrl(services, STATUS_HOOK_PATH),
  };
  if (row.templateSid) {
    message.contentSid = row.templateSid;
    if (row.templateVariables) message.contentVariables = row.templateVariables;
  } else if (row.body !== null) {
    message.body = row.body;
  }
  return message;
}

/** The provider's first status as a message status (Twilio answers queued, or accepted with a messaging service). */
function firstStatus(status: string): string {
  return ['sending', 'sent', 'delivered', 'failed', 'undelivered'].includes(status) ? status : 'queued';
}

/** Ends a claim with `set` while it holds, and emits `sms.sent` when the provider accepted the message. */
async function record(
  services: Services,
  row: MessageRow,
  set: Partial<typeof messages.$inferInsert>,
  accepted: boolean,
): Promise<boolean> {
  return services.db.withTenant(row.orgId, async (tx) => {
    const written = await writeIfClaimed(tx, LEASED, row, { ...set, nextAttemptAt: null });
    if (!written) return false;
    if (accepted) await recordEvent(tx, row.orgId, 'sms.sent', serializeMessage(written));
    return true;
  });
}

/** A row's `sending` claims whose lease expired (one row, or all): the sender died; outcome unknown. */
async function endExpiredClaims(services: Services, now: Date, id?: string): Promise<number> {
  const conditions: SQL[] = [eq(messages.status, 'sending'), lte(messages.nextAttemptAt, now)];
  if (id !== undefined) conditions.push(eq(messages.id, id));
  const ended = await services.db.system
    .update(messages)
    .set({
      status: 'unknown',
      errorCode: 'outcome_unknown',
      errorMessage: 'the sender stopped during its attempt; outcome unknown, not resent',
      nextAttemptAt: null,
      updatedAt: now,
    })
    .where(and(...conditions))
    .returning({ id: messages.id });
  return ended.length;
}

export type MessageSendOutcome = 'sent' | 'retry' | 'failed' | 'unknown' | 'skipped';

/** One attempt at a queued message (see the module comment, 3). */
export async function attemptMessage(
  services: Services,
  id: string,
  now = new Date(),
): Promise<MessageSendOutcome> {
  const { logger } = services;
  await endExpiredClaims(services, now, id);
  const row = await claimRow(
    services.db.system,
    LEASED,
    { id, now, also: eq(messages.status, 'queued') },
    { updatedAt: now },
  );
  if (!row) return 'skipped';
  const fields = { message_id: row.id, org_id: row.orgId, attempt: row.attempts };
  try {
    const credentials = await services.db.withTenant(row.orgId, (tx) =>
      requireTelephony(tx, services, row.orgId),
    );
    const sent = await services.telephony.sendMessage(credentials, outboundOf(services, row));
    await record(services, row, { sid: sent.sid, status: firstStatus(sent.status), updatedAt: now }, true);
    logger.info({ ...fields, sid: sent.sid }, 'message sent');
    return 'sent';
  } catch (err) {
    const reason = failureReason(err);
    if (err instanceof TelephonyError && err.outcome === 'unknown') {
      await record(
        services,
        row,
        {
          status: 'unknown',
          errorCode: err.code,
          errorMessage: `outcome unknown: ${reason}`,
          updatedAt: now,
        },
        false,
      );
      logger.warn({ ...fields, error: reason }, 'message outcome unknown; not resent');
      return 'unknown';
    }
    // The provider's answer says whether to try again; telephony switched off meanwhile (an AppError)
    // will not change by itself; anything else (the database) may.
    const retry = err instanceof TelephonyError ? err.outcome === 'retry' : !(err instanceof AppError);
    if (retry && row.attempts < LEASED.policy.maxAttempts) {
      const { delayMs, row: again } = await retryLater(services.db.system, LEASED, row, now, {
        errorMessage: reason,
        updatedAt: now,
      });
      if (again) {
        const log = { fields, message: 'could not enqueue the next message attempt' };
        await enqueueNextAttempt(services, WAKE_UP, row, delayMs, log);
      }
      logger.warn({ ...fields, error: reason }, 'message attempt failed; will retry');
      return 'retry';
    }
    const code = err instanceof TelephonyError ? err.code : err instanceof AppError ? err.code : 'not_sent';
    await record(
      services,
      row,
      { status: 'failed', errorCode: code, errorMessage: reason, updatedAt: now },
      false,
    );
    logger.warn({ ...fields, error: reason }, 'message failed');
    return 'failed';
  }
}

/** Queued messages due but not woken, after ending the claims of senders that died. */
async function sweepDueMessages(services: Services, graceMs: number, now = new Date()): Promise<number> {
  await endExpiredClaims(services, now);
  return sweepDueRows(services, LEASED, WAKE_UP, {
    what: 'messages',
    graceMs,
    now,
  });
}

/** One attempt per job: the row schedules its own retries. */
export const sendMessageJob: DefinedJob = singleAttemptJob({
  name: 'messages.send',
  payload: sendMessagePayload,
  run: (services, { id }) => attemptMessage(services, id),
});

export const messageSweep: Sweep = {
  name: 'messages',
  run: (services, graceMs) => sweepDueMessages(services, graceMs),
};

/** What an automated send (a workflow's sms step) did: queued the message, or skipped it and why. */
export type AutomatedSms = { queued: MessageRow } | { skipped: string };

/**
 * An SMS a workflow sends for the user in `ctx` (their enrollment): skipped with the reason when the
 * organization has no telephony or no SMS-capable number; otherwise to `recipient()` (asked only
 * then: the caller's own checks and refusals) from the organization's first
 * SMS-capable number (the oldest), checked (checkSend: a refusal is its AppError) and queued in the
 * caller's transaction. The caller sends it after the commit (sendQueued).
 */
export async function queueAutomatedSms(
  ctx: RecordContext,
  services: Pick<Services, 'secrets'>,
  input: { leadId: string; body: string; recipient: () => Promise<string> },
): Promise<AutomatedSms> {
  const orgId = ctx.auth.orgId;
  if (!(await telephonyCredentialsOf(ctx.db, services, orgId)))
    return { skipped: 'telephony is not configured' };
  const number = await firstNumberWith(ctx.db, orgId, 'sms');
  if (!number) return { skipped: 'the organization has no SMS-capable phone number' };
  const message: MessageToSend = {
    channel: 'sms',
    leadId: input.leadId,
    to: await input.recipient(),
    fromPhoneNumberId: number.id,
    body: input.body,
  };
  const { from } = await checkSend(ctx.db, services, orgId, message, ctx.now);
  return { queued: await queueMessage(ctx, message, from) };
}

/** After the commit of a queued message: its safety-net job, then the attempt. */
export async function sendQueued(services: Services, row: MessageRow): Promise<MessageSendOutcome> {
  await wakeMessage(services, row);
  return attemptMessage(services, row.id);
}
