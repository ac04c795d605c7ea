// The password-reset area's tables: the requests as they arrive (one row per POST, whatever the
// address, so the route does the same work for every address) and the tokens the job issues for a
// live user (kept as the SHA-256 hash only, one hour, single use).
import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, id, orgId, ts, users } from '../../core/db/schema.ts';

/** What the job made of a request. */
export type ResetOutcome = 'sent' | 'unknown' | 'inactive' | 'capped';

/**
 * One request of `POST /api/v1/auth/password-reset`, before anyone knows whether the address is a
 * user's: it belongs to no organization, and only the system role reads it. The address is kept
 * until the job has processed the row (then cleared); its hash stays for the daily cleanup's
 * bookkeeping.
 */
export const passwordResetRequests = pgTable(
  'password_reset_requests',
  {
    id: id(),
    /** The address as sent, trimmed and lower-cased; null once processed, or when it was too long to be one. */
    email: text('email'),
    /** SHA-256 (hex) of the trimmed, lower-cased address. */
    emailHash: text('email_hash').notNull(),
    ip: text('ip').notNull(),
    requestedAt: ts('requested_at').notNull(),
    processedAt: ts('processed_at'),
    /** sent | unknown | inactive (user or organization) | capped, once processed. */
    outcome: text('outcome').$type<ResetOutcome>(),
  },
  (t) => [
    index('password_reset_requests_due_idx').on(t.requestedAt).where(sql`${t.processedAt} is null`),
    index('password_reset_requests_time_idx').on(t.requestedAt),
  ],
);

/** A reset token of one user: the hash of 32 random bytes, valid until `expires_at`, spent by `used_at`. */
export const passwordResetTokens = pgTable(
  'password_reset_tokens',
  {
    id: id(),
    orgId: orgId(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    requestId: text('request_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('password_reset_tokens_hash_uq').on(t.tokenHash),
    index('password_reset_tokens_user_idx').on(t.userId, t.createdAt),
  ],
);
