// The connected-accounts area's tables: a user's own SMTP accounts (the mail they send to leads goes
// out through their own server) and the inbound mails received on an account's hook.
//
// Secrets at rest go through the secrets port (core/secrets.ts): the SMTP password, the inbound
// token (shown to its owner inside `inbound_url`) and the inbound signing key are stored encrypted,
// each bound to its column and row as associated data. The inbound hook finds the account by the
// SHA-256 of its token, so the lookup never needs to decrypt anything.
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, id, orgId, ts, updatedAt, users } from '../../core/db/schema.ts';
import { contacts } from '../contacts/tables.ts';
import { leadRef } from '../leads/tables.ts';

export const connectedAccounts = pgTable(
  'connected_accounts',
  {
    id: id(),
    orgId: orgId(),
    /** The user the account belongs to: only they see it and send through it. */
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    displayName: text('display_name'),
    smtpHost: text('smtp_host').notNull(),
    smtpPort: integer('smtp_port').notNull(),
    /** TLS from the first byte (port 465); otherwise plain, upgraded with STARTTLS. */
    smtpSecure: boolean('smtp_secure').notNull(),
    /**
     * With `smtp_secure` false: the session must upgrade with STARTTLS before AUTH (true, the
     * default), or may log in over plain text when the server offers no STARTTLS (false).
     */
    smtpRequireTls: boolean('smtp_require_tls').notNull().default(true),
    smtpUsername: text('smtp_username').notNull(),
    /** Encrypted (core/secrets.ts, context `connected_accounts.smtp_password:<id>`); never returned. */
    smtpPassword: text('smtp_password').notNull(),
    /** unverified | verified | error */
    status: text('status').notNull().default('unverified'),
    /** Why the last verification failed (refused connection, bad credentials, certificate, ...). */
    statusReason: text('status_reason'),
    /** A short machine code beside the reason: connection_refused, auth_failed, certificate, ... */
    statusCode: text('status_code'),
    verifiedAt: ts('verified_at'),
    lastCheckedAt: ts('last_checked_at'),
    /** SHA-256 (hex) of the inbound token: how the public hook finds the account. */
    inboundTokenHash: text('inbound_token_hash').notNull(),
    /** The inbound token, encrypted: its owner reads it inside `inbound_url`. */
    inboundToken: text('inbound_token').notNull(),
    /** The key inbound requests are signed with (HMAC-SHA256), encrypted. */
    inboundSigningKey: text('inbound_signing_key').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('connected_accounts_inbound_token_idx').on(t.inboundTokenHash),
    uniqueIndex('connected_accounts_user_email_idx').on(t.orgId, t.userId, sql`lower(${t.email})`),
    index('connected_accounts_org_created_idx').on(t.orgId, t.createdAt.desc(), t.id.desc()),
    index('connected_accounts_user_idx').on(t.userId),
  ],
);

export type ConnectedAccountRow = typeof connectedAccounts.$inferSelect;

/**
 * Every inbound mail the hook accepted, once per organization and Message-ID (a provider retrying
 * the same message is ignored), with what it was matched to: the lead and contact of the sender,
 * the scheduled email it answers (by In-Reply-To), the activity it became.
 */
export const inboundEmails = pgTable(
  'inbound_emails',
  {
    id: id(),
    orgId: orgId(),
    connectedAccountId: text('connected_account_id').references(() => connectedAccounts.id, {
      onDelete: 'set null',
    }),
    messageId: text('message_id').notNull(),
    inReplyTo: text('in_reply_to'),
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address').notNull(),
    subject: text('subject').notNull(),
    leadId: leadRef(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    activityId: text('activity_id'),
    /** The scheduled email (tools/email) this one answers, found by In-Reply-To. */
    repliesToEmailId: text('replies_to_email_id'),
    receivedAt: ts('received_at').notNull().default(sql`now()`),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('inbound_emails_message_idx').on(t.orgId, t.messageId),
    index('inbound_emails_lead_idx').on(t.leadId),
    index('inbound_emails_account_idx').on(t.connectedAccountId),
    index('inbound_emails_contact_idx').on(t.contactId),
  ],
);

export type InboundEmailRow = typeof inboundEmails.$inferSelect;

/**
 * The signing tokens the inbound hook accepted in the last 10 minutes, per account: a captured
 * request replayed within its 5-minute timestamp window finds its token here and is refused. The
 * unique (account, token) index decides between two concurrent deliveries of one request; rows
 * older than the window are deleted as new ones arrive (docs/email.md "Inbound email").
 */
export const inboundTokens = pgTable(
  'inbound_tokens',
  {
    orgId: orgId(),
    connectedAccountId: text('connected_account_id')
      .notNull()
      .references(() => connectedAccounts.id, { onDelete: 'cascade' }),
    token: text('token').notNull(),
    seenAt: ts('seen_at').notNull(),
  },
  (t) => [
    uniqueIndex('inbound_tokens_account_token_idx').on(t.connectedAccountId, t.token),
    index('inbound_tokens_account_seen_idx').on(t.connectedAccountId, t.seenAt),
  ],
);
