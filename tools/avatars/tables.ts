// The avatars area's table: one row per avatar upload of an organization. A row is written when an
// upload link is issued (pending: `confirmed_at` null, with the size and type asked for) and
// confirmed once a copy of the stored bytes was checked; a confirmed row is the target's current avatar,
// served at /avatars/{id} without a token, so its id is 128 random bits, never an object id.
import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, orgId, ts, updatedAt } from '../../core/db/schema.ts';

export const avatars = pgTable(
  'avatars',
  {
    /** 32 hex characters of randomness: the opaque id of the public URL. */
    id: text('id').primaryKey(),
    orgId: orgId(),
    /** `user` or `organization`. */
    targetType: text('target_type').notNull(),
    /** The user's id, or the organization's own id. */
    targetId: text('target_id').notNull(),
    /** The key the upload link writes, `org/<org id>/avatars/<random>.<ext>`, chosen by the server. */
    uploadKey: text('upload_key').notNull(),
    /**
     * The key of the checked copy that is served, once confirmed (null while pending): no upload
     * link names it, so a link still valid after the confirmation cannot change what is served.
     */
    storedKey: text('stored_key'),
    contentType: text('content_type').notNull(),
    /** The size asked for with the upload link; the stored object must have exactly this size. */
    sizeBytes: integer('size_bytes').notNull(),
    createdBy: text('created_by'),
    /** When the upload was checked and became the target's avatar; null while pending. */
    confirmedAt: ts('confirmed_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('avatars_upload_key_uq').on(t.uploadKey),
    // One current avatar per target: a second confirmation of the same target replaces the row.
    uniqueIndex('avatars_current_uq')
      .on(t.orgId, t.targetType, t.targetId)
      .where(sql`${t.confirmedAt} is not null`),
    index('avatars_org_created_idx').on(t.orgId, t.createdAt),
  ],
);

export type AvatarRow = typeof avatars.$inferSelect;
