// The relational schema. Every tenant table carries `org_id`; row-level security policies (see the
// hand-written migration 0001_tenancy.sql) make PostgreSQL itself refuse rows of other organizations
// when a request runs under the `crm_app` role, so a forgotten filter returns nothing.
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { parsePgTimestamptz } from './timestamp.ts';

// Column builders every table shares (area tables in tools/<area>/tables.ts build on them too).
export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });
/** Text ordered byte by byte (`COLLATE "C"`), so the words starting with a prefix are one index range. */
export const byteOrderedText = customType<{ data: string }>({ dataType: () => 'text collate "C"' });
/**
 * The columns of a record type's words table: one row per (word, record) of the record's search
 * vector, with what a one-word global search ranks by (INCLUDE columns of the key, hand-written in
 * the migration), kept by statement-level triggers on the record's table; its key is
 * (org_id, term, record id).
 */
export const searchTermColumns = (recordIdColumn: string) => ({
  orgId: orgId(),
  term: byteOrderedText('term').notNull(),
  recordId: text(recordIdColumn).notNull(),
  /** The record's vector reduced to this word, with its positions. */
  positions: tsvector('positions').notNull(),
  /** Whether the record's lowercased name is this very word. */
  nameIsTerm: boolean('name_is_term').notNull(),
});

export const id = () => text('id').primaryKey();
export const orgId = () =>
  text('org_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });
export const createdAt = () =>
  timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const updatedAt = () =>
  timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
/**
 * A `timestamp with time zone` as a Date, read exactly whatever its year (core/db/timestamp.ts):
 * caller-given instants such as a payment's paid_at may lie in any year from 0001.
 */
export const ts = customType<{ data: Date; driverData: string }>({
  dataType: () => 'timestamp with time zone',
  toDriver: (value) => value.toISOString(),
  fromDriver: (value) => (typeof value === 'string' ? parsePgTimestamptz(value) : new Date(value)),
});
export const deletedAt = () => ts('deleted_at');
export const deletedBy = () => text('deleted_by');

export const organizations = pgTable('organizations', {
  id: id(),
  name: text('name').notNull(),
  plan: text('plan').notNull(),
  status: text('status').notNull().default('active'),
  disabledFeatures: text('disabled_features').array().notNull().default(sql`'{}'::text[]`),
  /** The stable public URL of its logo (tools/avatars), or null. */
  avatarUrl: text('avatar_url'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const users = pgTable(
  'users',
  {
    id: id(),
    orgId: orgId(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    role: text('role').notNull(),
    passwordHash: text('password_hash'),
    status: text('status').notNull().default('active'),
    deactivatedAt: ts('deactivated_at'),
    deletedAt: ts('deleted_at'),
    /** The stable public URL of their picture (tools/avatars), or null. */
    avatarUrl: text('avatar_url'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // Login is by email alone, so a live email is unique across the whole service.
    uniqueIndex('users_email_live_uq').on(sql`lower(${t.email})`).where(sql`${t.deletedAt} is null`),
    index('users_org_idx').on(t.orgId, t.createdAt),
  ],
);

export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    id: id(),
    orgId: orgId(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    familyId: text('family_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: ts('expires_at').notNull(),
    rotatedAt: ts('rotated_at'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('refresh_tokens_hash_uq').on(t.tokenHash),
    index('refresh_tokens_family_idx').on(t.familyId),
  ],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: id(),
    orgId: orgId(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    label: text('label').notNull(),
    tokenHash: text('token_hash').notNull(),
    tokenPrefix: text('token_prefix').notNull(),
    scopes: text('scopes').array().notNull(),
    // MCP toolsets the key lists by default; empty means the server default (core).
    toolsets: text('toolsets').array().notNull().default(sql`'{}'::text[]`),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('api_keys_hash_uq').on(t.tokenHash),
    // Labels stay reserved after revocation (the specification's state table).
    uniqueIndex('api_keys_user_label_uq').on(t.userId, t.label),
  ],
);

export const oauthTokens = pgTable(
  'oauth_tokens',
  {
    id: id(),
    orgId: orgId(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    appName: text('app_name').notNull(),
    tokenHash: text('token_hash').notNull(),
    scopes: text('scopes').array().notNull(),
    /**
     * The resource the token was issued for (RFC 8707): 'mcp' or 'api'. Null for tokens the
     * operator minted, which are accepted on both.
     */
    resource: text('resource'),
    /** MCP toolsets the person chose at consent (empty: the default); null for operator tokens. */
    toolsets: text('toolsets').array(),
    /** The grant (an OAuth area installation) the token belongs to; null for operator tokens. */
    installationId: text('installation_id'),
    /** The authorization code the token's refresh family started from; revoked together on reuse. */
    familyId: text('family_id'),
    lastUsedAt: ts('last_used_at'),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('oauth_tokens_hash_uq').on(t.tokenHash),
    index('oauth_tokens_installation_idx').on(t.installationId),
    index('oauth_tokens_family_idx').on(t.familyId),
  ],
);

export const outboxEvents = pgTable(
  'outbox_events',
  {
    id: id(),
    orgId: orgId(),
    event: text('event').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    createdAt: createdAt(),
    relayedAt: ts('relayed_at'),
  },
  (t) => [index('outbox_pending_idx').on(t.createdAt).where(sql`${t.relayedAt} is null`)],
);

/** A mail message as the outbox keeps it (core/mail-outbox.ts): core/mail.ts's MailMessage without attachments. */
export interface StoredMailMessage {
  to: unknown;
  cc?: unknown;
  bcc?: unknown;
  replyTo?: unknown;
  subject: string;
  text?: string;
  html?: string;
  headers?: Record<string, string>;
}

/** An attachment of an outgoing mail, its bytes in base64. */
export interface StoredMailAttachment {
  filename: string;
  content_type: string;
  content: string;
}

/**
 * Outgoing system mail (core/mail-outbox.ts): one row per message, sent exactly once by the
 * 'mail.send' job. `key` is the caller's idempotency key, unique per organization. For a queued row
 * `next_attempt_at` is when it is due; for a row being sent, when the sender's claim (lease) expires.
 */
export const outgoingMails = pgTable(
  'outgoing_mails',
  {
    id: id(),
    orgId: orgId(),
    key: text('key').notNull(),
    subjectType: text('subject_type').notNull(),
    subjectId: text('subject_id').notNull(),
    status: text('status').notNull().default('queued'),
    /**
     * The connected account (tools/connected-accounts) the mail goes out through, the sending user's
     * own; null: the system mailer. Not a foreign key: the kernel names no area's table, and the
     * worker falls back to system mail when the account is gone (core/mail-outbox.ts).
     */
    accountId: text('account_id'),
    message: jsonb('message').$type<StoredMailMessage>().notNull(),
    attachments: jsonb('attachments').$type<StoredMailAttachment[]>().notNull().default([]),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    lastError: text('last_error'),
    messageId: text('message_id'),
    sentAt: ts('sent_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('outgoing_mails_org_key_uq').on(t.orgId, t.key),
    index('outgoing_mails_subject_idx').on(t.orgId, t.subjectType, t.subjectId),
    index('outgoing_mails_due_idx').on(t.nextAttemptAt).where(sql`${t.status} in ('queued', 'sending')`),
  ],
);

/**
 * REST idempotency keys (core/idempotency.ts): one row per (organization, credential, key). A row is
 * `in_flight` from the claim until the request's outcome is kept (`done`, with its status and body);
 * `claim` tells this claim from a later one that took the key over after `lease_until` passed (a
 * process that died mid-request), so only the current claimant can keep a response.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    id: id(),
    orgId: orgId(),
    /** The API key or OAuth token id, or `session:<user id>` for a session. */
    credential: text('credential').notNull(),
    key: text('key').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    /** sha256 of the method, path and canonical input: "the same request". */
    requestHash: text('request_hash').notNull(),
    status: text('status').notNull().default('in_flight'),
    claim: text('claim').notNull(),
    leaseUntil: ts('lease_until'),
    responseStatus: integer('response_status'),
    /** The answer's JSON text as sent, so a replay is byte for byte the first answer. */
    responseBody: text('response_body'),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('idempotency_keys_key_uq').on(t.orgId, t.credential, t.key),
    index('idempotency_keys_expires_idx').on(t.expiresAt),
  ],
);

/**
 * Exact counts of live (not trashed) rows per organization, kind and key (core/live-counts.ts), kept
 * as an append-only ledger of deltas: statement-level triggers on a counted table insert one row per
 * (organization, key) a statement changes, in the writer's own transaction, so concurrent writers
 * never wait on a shared counter row; a count is the sum of an organization's rows, and a periodic
 * fold collapses them (docs/decisions.md "Exact counts without a hot row"). `key` is the value of
 * the table's bucket column (an invoice's status), or '' when the table counts one total.
 */
export const liveCounts = pgTable(
  'live_counts',
  {
    orgId: orgId(),
    kind: text('kind').notNull(),
    key: text('key').notNull().default(''),
    delta: bigint('delta', { mode: 'number' }).notNull(),
  },
  // The delta in the index too, so a count can be read from the index alone.
  (t) => [index('live_counts_org_kind_key_idx').on(t.orgId, t.kind, t.key, t.delta)],
);

export type OrganizationRow = typeof organizations.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type OutgoingMailRow = typeof outgoingMails.$inferSelect;
