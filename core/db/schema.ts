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

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

const id = () => text('id').primaryKey();
const orgId = () =>
  text('org_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });
const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const organizations = pgTable('organizations', {
  id: id(),
  name: text('name').notNull(),
  plan: text('plan').notNull(),
  status: text('status').notNull().default('active'),
  disabledFeatures: text('disabled_features').array().notNull().default(sql`'{}'::text[]`),
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
    lastUsedAt: ts('last_used_at'),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('oauth_tokens_hash_uq').on(t.tokenHash)],
);

export const leads = pgTable(
  'leads',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    description: text('description'),
    url: text('url'),
    status: text('status').notNull().default('new'),
    ownerId: text('owner_id'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    /** Additional properties of any type (the specification's open lead shape). */
    custom: jsonb('custom').$type<Record<string, unknown>>().notNull().default({}),
    convertedAt: ts('converted_at'),
    createdBy: text('created_by'),
    deletedAt: ts('deleted_at'),
    deletedBy: text('deleted_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    search: tsvector('search').generatedAlwaysAs(
      sql`to_tsvector('simple', coalesce(name, '') || ' ' || coalesce(description, '') || ' ' || coalesce(url, '') || ' ' || coalesce(status, ''))`,
    ),
  },
  (t) => [
    // Live leads in the default order (created_at DESC is NULLS FIRST in PostgreSQL, so the index
    // says so too, or the planner sorts every row); also serves the live count of an organization.
    index('leads_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('leads_live_updated_idx')
      .on(t.orgId, t.updatedAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('leads_org_owner_idx').on(t.orgId, t.ownerId),
    index('leads_search_idx').using('gin', t.search),
    // The `tag` filter of list_leads (`tags @> array[...]`).
    index('leads_tags_idx').using('gin', t.tags),
    // The trash list: only trashed rows, newest deleted first.
    index('leads_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

/**
 * Live (not trashed) leads per organization, kept exact by statement-level triggers on `leads`
 * (migration 0005), so the unfiltered `total` of a leads list is one primary-key read instead of a
 * count over every row of a large organization.
 */
export const leadCounts = pgTable('lead_counts', {
  orgId: text('org_id')
    .primaryKey()
    .references(() => organizations.id, { onDelete: 'cascade' }),
  live: bigint('live', { mode: 'number' }).notNull().default(0),
});

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

export type OrganizationRow = typeof organizations.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type LeadRow = typeof leads.$inferSelect;

/** Webhook subscriptions. The specification validates `name` on create but does not store it. */
export const webhooks = pgTable(
  'webhooks',
  {
    id: id(),
    orgId: orgId(),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    /** Keys the signatures; needed in clear to sign, so it is never returned by the API. */
    secret: text('secret').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    createdBy: text('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('webhooks_org_idx').on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())],
);

/** One attempt of a delivery, as kept in the delivery log (DESIGN.md). */
export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  /** Error kind for failures without a usable response: timeout, network, redirect, blocked_target, ... */
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
  /** When the next attempt is due, or null when this was the last one. */
  next_attempt_at: string | null;
}

/**
 * One event for one subscription: its id is the delivery id receivers see on every attempt and
 * replay (X-CRM-Delivery-Id, webhook-id), the BullMQ job id, and `{deliveryId}` of the replay route.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: id(),
    orgId: orgId(),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    event: text('event').notNull(),
    /** The outbox row it came from; null for webhook.test deliveries. */
    outboxEventId: text('outbox_event_id'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    status: text('status').notNull().default('pending'),
    attempts: jsonb('attempts').$type<DeliveryAttempt[]>().notNull().default([]),
    nextAttemptAt: ts('next_attempt_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // The relay may run on several nodes and retry: one delivery per (event, subscription), ever.
    uniqueIndex('webhook_deliveries_event_uq').on(t.outboxEventId, t.webhookId),
    index('webhook_deliveries_log_idx').on(
      t.orgId,
      t.webhookId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
  ],
);

export type WebhookRow = typeof webhooks.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
