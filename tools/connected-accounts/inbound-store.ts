// Recording an inbound mail (what the public hook of inbound.ts does once the request is
// authenticated), and the list of what arrived on an account. Everything happens in one tenant
// transaction: the inbound_emails row (once per organization and Message-ID: a repeat records
// nothing), the lead and contact of the sender, the scheduled email it answers, an incoming email
// activity acting as the account's owner, the `email.received` event, and the emailReceived hooks of
// the other areas (a reply cancels a follow-up, stops a sequence).
import { and, count, desc, eq, lt } from 'drizzle-orm';
import { z } from 'zod';
import type {
  EmailReceivedHook,
  InboundEmailFacts,
  ReplyTargetHook,
  SystemHookContext,
} from '../../core/area.ts';
import type { Executor } from '../../core/db/client.ts';
import { AppError } from '../../core/errors.ts';
import { recordEvent } from '../../core/events.ts';
import { newId } from '../../core/ids.ts';
import { offsetOf, type Page, paged } from '../../core/schemas.ts';
import type { Services } from '../../core/services.ts';
import { actorAuth, actorContext } from '../../core/system-actor.ts';
import { insertActivity } from '../activities/store.ts';
import { liveContactWithAddress } from '../contacts/lookups.ts';
import { type ConnectedAccountRow, type InboundEmailRow, inboundEmails, inboundTokens } from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Record shape and list

export const inboundEmailSchema = z
  .object({
    _id: z.string().describe('Inbound email id (24 hex characters)'),
    connected_account_id: z.string().nullable().describe('The connected account it arrived on'),
    message_id: z.string().describe('Its Message-ID, e.g. <abc@mail.example.com>'),
    in_reply_to: z.string().nullable().describe('The In-Reply-To it carried, or null'),
    from: z.string().describe("The sender's address (lower-case)"),
    to: z.string().describe('The recipients as received'),
    subject: z.string().describe('The subject'),
    lead_id: z.string().nullable().describe('The lead whose contact has the sender address, or null'),
    contact_id: z.string().nullable().describe('The contact with the sender address, or null'),
    activity_id: z.string().nullable().describe('The incoming email activity recorded on the lead, or null'),
    replies_to_email_id: z
      .string()
      .nullable()
      .describe('The scheduled email (job_id) this mail answers, by In-Reply-To, or null'),
    received_at: z.string().describe('When it was received (ISO 8601)'),
  })
  .describe('A mail received on a connected account through its inbound URL');
export type InboundEmailRecord = z.output<typeof inboundEmailSchema>;

function serializeInboundEmail(row: InboundEmailRow): InboundEmailRecord {
  return {
    _id: row.id,
    connected_account_id: row.connectedAccountId,
    message_id: row.messageId,
    in_reply_to: row.inReplyTo,
    from: row.fromAddress,
    to: row.toAddress,
    subject: row.subject,
    lead_id: row.leadId,
    contact_id: row.contactId,
    activity_id: row.activityId,
    replies_to_email_id: row.repliesToEmailId,
    received_at: row.receivedAt.toISOString(),
  };
}

/** The mails received on one account (the caller checked it is theirs), newest first. */
export async function listInboundEmailsOf(db: Executor, orgId: string, accountId: string, page: Page) {
  const where = and(eq(inboundEmails.orgId, orgId), eq(inboundEmails.connectedAccountId, accountId));
  const rows = await db
    .select()
    .from(inboundEmails)
    .where(where)
    .orderBy(desc(inboundEmails.receivedAt), desc(inboundEmails.id))
    .limit(page.limit)
    .offset(offsetOf(page));
  const [total] = await db.select({ n: count() }).from(inboundEmails).where(where);
  return paged('inbound_emails', rows.map(serializeInboundEmail), total?.n ?? 0, page);
}

// ---------------------------------------------------------------------------------------------
// Matching

/** The mail one of these Message-IDs names, as the first reply-target hook that knows it answers. */
async function repliedEmail(
  db: Executor,
  orgId: string,
  messageIds: readonly string[],
  targets: readonly ReplyTargetHook[],
): Promise<{ id: string; leadId: string | null } | null> {
  if (messageIds.length === 0) return null;
  for (const target of targets) {
    const found = await target(db, orgId, messageIds);
    if (found) return found;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Recording

export interface InboundMail {
  /** The sender's address, lower-case. */
  fromAddress: string;
  /** The recipients' addresses. */
  toAddresses: string[];
  /** The To field as received. */
  to: string;
  subject: string;
  bodyText: string | null;
  /** Normalized `<id>`. */
  messageId: string;
  /** The In-Reply-To as received (null when absent) and the Message-IDs it names, normalized. */
  inReplyTo: string | null;
  inReplyToIds: string[];
}

export type InboundOutcome = { status: 'received'; inboundEmailId: string } | { status: 'duplicate' };

/** The activity's subject (1-998 characters; a mail without subject still becomes an activity). */
const activitySubject = (subject: string) => (subject.trim() === '' ? '(no subject)' : subject.slice(0, 998));
/** The activity's body, at most the activity limit. */
const ACTIVITY_BODY_MAX = 100_000;

/**
 * Records one authenticated inbound mail on `account` in its organization's tenant transaction and
 * runs the hooks. A hook's error (or any other) rolls everything back, so the provider's retry finds
 * no duplicate and records it again.
 */
export async function recordInboundEmail(
  services: Services,
  account: ConnectedAccountRow,
  mail: InboundMail,
  hooks: readonly EmailReceivedHook[],
  now: Date,
  signingToken: string,
  replyTargets: readonly ReplyTargetHook[] = [],
): Promise<InboundOutcome> {
  const orgId = account.orgId;
  return services.db.withTenant(orgId, async (tx) => {
    await rememberSigningToken(tx, account, signingToken, now);
    const contact = await liveContactWithAddress(tx, orgId, mail.fromAddress);
    const replied = await repliedEmail(tx, orgId, mail.inReplyToIds, replyTargets);
    // The sender may write from an address no contact has; a reply to our mail still belongs to its lead.
    const leadId = contact?.leadId ?? replied?.leadId ?? null;
    const contactId = contact?.contactId ?? null;
    const id = newId(now);
    const [row] = await tx
      .insert(inboundEmails)
      .values({
        id,
        orgId,
        connectedAccountId: account.id,
        messageId: mail.messageId,
        inReplyTo: mail.inReplyTo,
        fromAddress: mail.fromAddress,
        toAddress: mail.to,
        subject: mail.subject,
        leadId,
        contactId,
        repliesToEmailId: replied?.id ?? null,
        receivedAt: now,
        createdAt: now,
      })
      // The unique (org, Message-ID) index decides between two deliveries of the same mail.
      .onConflictDoNothing()
      .returning();
    if (!row) return { status: 'duplicate' };

    let activityId: string | null = null;
    const auth = leadId === null ? null : await actorAuth(tx, orgId, account.userId);
    if (leadId !== null && auth !== null) {
      const activity = await insertActivity(actorContext(tx, auth, now), {
        type: 'email',
        direction: 'inbound',
        subject: activitySubject(mail.subject),
        body_text: mail.bodyText === null ? null : mail.bodyText.slice(0, ACTIVITY_BODY_MAX),
        from: mail.fromAddress,
        to: mail.toAddresses.slice(0, 50),
        lead_id: leadId,
        ...(contactId === null ? {} : { contact_id: contactId }),
        occurred_at: now.toISOString(),
      });
      activityId = activity._id;
      await tx.update(inboundEmails).set({ activityId }).where(eq(inboundEmails.id, id));
    }

    const emit: SystemHookContext['emit'] = async (event, data) =>
      void (await recordEvent(tx, orgId, event, data));
    await emit('email.received', {
      inbound_email_id: id,
      connected_account_id: account.id,
      lead_id: leadId,
      contact_id: contactId,
      from: mail.fromAddress,
      to: mail.to,
      subject: mail.subject,
      message_id: mail.messageId,
      in_reply_to: mail.inReplyTo,
      replies_to_email_id: replied?.id ?? null,
      activity_id: activityId,
      received_at: now.toISOString(),
    });

    const facts: InboundEmailFacts = {
      inboundEmailId: id,
      connectedAccountId: account.id,
      accountUserId: account.userId,
      leadId,
      contactId,
      fromAddress: mail.fromAddress,
      messageId: mail.messageId,
      inReplyTo: mail.inReplyTo,
      repliesToEmailId: replied?.id ?? null,
      receivedAt: now,
    };
    const hookContext: SystemHookContext = { db: tx, orgId, emit, now, services };
    await runEmailReceivedHooks(hooks, hookContext, facts);
    return { status: 'received', inboundEmailId: id };
  });
}

/** How long a signing token is remembered: the 5-minute timestamp window either side of its use. */
const TOKEN_MEMORY_MS = 10 * 60_000;

/**
 * Remembers the signing token of an authenticated request for TOKEN_MEMORY_MS, or throws the 401 of
 * a replay when the account accepted it already. Inside the recording transaction: a request that
 * fails later (a hook's error, a 500) leaves no token behind, so the provider's retry of the same
 * request is not taken for a replay. Two concurrent deliveries of one request meet at the unique
 * (account, token) index: the second waits for the first to commit and then inserts nothing.
 * Tokens past the window are deleted here, per account, so the table holds ten minutes of traffic.
 */
async function rememberSigningToken(
  tx: Executor,
  account: ConnectedAccountRow,
  token: string,
  now: Date,
): Promise<void> {
  const cutoff = new Date(now.getTime() - TOKEN_MEMORY_MS);
  await tx
    .delete(inboundTokens)
    .where(and(eq(inboundTokens.connectedAccountId, account.id), lt(inboundTokens.seenAt, cutoff)));
  const [fresh] = await tx
    .insert(inboundTokens)
    .values({ orgId: account.orgId, connectedAccountId: account.id, token, seenAt: now })
    .onConflictDoNothing()
    .returning({ token: inboundTokens.token });
  if (!fresh)
    throw new AppError('invalid_token', {
      error: 'Invalid signature',
      message: 'This signed request was already received (its token was used in the last 10 minutes)',
    });
}

/** Runs every hook in order, in the recording transaction; the first error stops and rolls back. */
async function runEmailReceivedHooks(
  hooks: readonly EmailReceivedHook[],
  ctx: SystemHookContext,
  facts: InboundEmailFacts,
): Promise<void> {
  for (const hook of hooks) await hook(ctx, facts);
}
