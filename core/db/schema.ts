// The relational schema. Every tenant table carries `org_id`; row-level security policies (see the
// hand-written migration 0001_tenancy.sql) make PostgreSQL itself refuse rows of other organizations
// when a request runs under the `crm_app` role, so a forgotten filter returns nothing.
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  date,
  index,
  integer,
  jsonb,
  numeric,
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
    // Status filters of lists and smart views, and their counts (a status is ~15% of a large org).
    index('leads_live_status_idx').on(t.orgId, t.status).where(sql`${t.deletedAt} is null`),
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

// ---------------------------------------------------------------------------------------------
// Sales core. Records hanging off a lead reference it with ON DELETE CASCADE: trashing a lead trashes
// its live children with the same `deleted_at` (tools/lead-children.ts), and purging the lead from
// the trash removes them for good.

const leadRef = (name = 'lead_id') => text(name).references(() => leads.id, { onDelete: 'cascade' });
const deletedAt = () => ts('deleted_at');
const deletedBy = () => text('deleted_by');

export interface ContactEmail {
  email: string;
  type: string;
}
export interface ContactPhone {
  phone: string;
  type: string;
}

export const contacts = pgTable(
  'contacts',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef().notNull(),
    name: text('name').notNull(),
    title: text('title'),
    emails: jsonb('emails').$type<ContactEmail[]>().notNull().default([]),
    phones: jsonb('phones').$type<ContactPhone[]>().notNull().default([]),
    /** Additional properties (custom fields), as on leads. */
    custom: jsonb('custom').$type<Record<string, unknown>>().notNull().default({}),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    search: tsvector('search').generatedAlwaysAs(
      sql`to_tsvector('simple', coalesce(name, '') || ' ' || coalesce(title, '') || ' ' || jsonb_path_query_array(emails, '$[*].email')::text || ' ' || jsonb_path_query_array(phones, '$[*].phone')::text)`,
    ),
  },
  (t) => [
    index('contacts_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    // Lead ids are unique across organizations, so lead_id alone is as selective as (org_id, lead_id)
    // and also serves the FK cascade when a lead is purged (its DELETE names lead_id only).
    index('contacts_lead_idx').on(t.leadId),
    index('contacts_search_idx').using('gin', t.search),
    index('contacts_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

export const opportunities = pgTable(
  'opportunities',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef().notNull(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    note: text('note'),
    /** In the currency's major unit (12.5 = 12.50), exact to the cent. */
    value: numeric('value', { precision: 18, scale: 2, mode: 'number' }).notNull().default(0),
    currency: text('currency').notNull().default('USD'),
    confidence: integer('confidence').notNull().default(0),
    status: text('status').notNull().default('active'),
    pipelineStage: text('pipeline_stage'),
    expectedCloseDate: date('expected_close_date', { mode: 'string' }),
    ownerId: text('owner_id'),
    /** When the status last moved to won or lost; null while active. */
    closedAt: ts('closed_at'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    search: tsvector('search').generatedAlwaysAs(
      sql`to_tsvector('simple', coalesce(note, '') || ' ' || coalesce(pipeline_stage, '') || ' ' || coalesce(status, ''))`,
    ),
  },
  (t) => [
    index('opportunities_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('opportunities_lead_idx').on(t.leadId),
    // The ON DELETE SET NULL of contact_id when a contact is purged.
    index('opportunities_contact_idx').on(t.contactId),
    index('opportunities_owner_idx').on(t.orgId, t.ownerId),
    index('opportunities_search_idx').using('gin', t.search),
    index('opportunities_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

/** A field of a custom object or custom activity type definition. */
export interface CustomFieldDef {
  key: string;
  label: string;
  type: 'text' | 'number' | 'date' | 'boolean' | 'choice' | 'user' | 'lead';
  required: boolean;
  /** The allowed values of a `choice` field. */
  options?: string[];
}

export const customActivityTypes = pgTable(
  'custom_activity_types',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    description: text('description'),
    fields: jsonb('fields').$type<CustomFieldDef[]>().notNull().default([]),
    createdBy: text('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('custom_activity_types_name_uq').on(t.orgId, sql`lower(${t.name})`)],
);

export const activities = pgTable(
  'activities',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef().notNull(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    /** note | call | email | meeting | custom */
    type: text('type').notNull(),
    customActivityTypeId: text('custom_activity_type_id').references(() => customActivityTypes.id),
    /** The user the activity is by (the caller unless given). */
    userId: text('user_id'),
    /** When it happened (a call's start, a meeting's start, an email's send time); newest first on the timeline. */
    occurredAt: ts('occurred_at').notNull().defaultNow(),
    /** The type's own fields: a call's direction/duration/outcome, an email's subject, a custom type's values. */
    fields: jsonb('fields').$type<Record<string, unknown>>().notNull().default({}),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('activities_timeline_idx')
      .on(t.orgId, t.leadId, t.occurredAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('activities_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    // "Has an activity of type X": smart views and lead health probe by (org, type, lead).
    index('activities_type_lead_idx').on(t.orgId, t.type, t.leadId).where(sql`${t.deletedAt} is null`),
    index('activities_custom_type_idx').on(t.orgId, t.customActivityTypeId),
    // FK cascades when a lead or a contact is purged from the trash.
    index('activities_lead_idx').on(t.leadId),
    index('activities_contact_idx').on(t.contactId),
    index('activities_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

export const tasks = pgTable(
  'tasks',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef(),
    assignedTo: text('assigned_to'),
    text: text('text').notNull(),
    dueAt: ts('due_at'),
    isComplete: boolean('is_complete').notNull().default(false),
    completedAt: ts('completed_at'),
    completedBy: text('completed_by'),
    /** Hidden from "my open tasks" until this time. */
    snoozedUntil: ts('snoozed_until'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('tasks_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('tasks_assignee_open_idx')
      .on(t.orgId, t.assignedTo, t.dueAt)
      .where(sql`${t.deletedAt} is null and ${t.isComplete} = false`),
    index('tasks_lead_idx').on(t.leadId),
    index('tasks_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

/** One saved filter over leads. `query` and `sort` are stored as validated by the smart-view tools. */
export const smartViews = pgTable(
  'smart_views',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    scope: text('scope').notNull().default('leads'),
    query: jsonb('query').$type<Record<string, unknown>>().notNull(),
    sort: jsonb('sort').$type<{ field: string; direction: number } | null>(),
    displayColumns: text('display_columns').array().notNull().default(sql`'{}'::text[]`),
    visibility: text('visibility').notNull().default('private'),
    /** The creator; a private view is visible to this user only. */
    ownerId: text('owner_id').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('smart_views_org_idx').on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
  ],
);

export const customObjects = pgTable(
  'custom_objects',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    description: text('description'),
    fields: jsonb('fields').$type<CustomFieldDef[]>().notNull().default([]),
    createdBy: text('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('custom_objects_name_uq').on(t.orgId, sql`lower(${t.name})`)],
);

export const customObjectRecords = pgTable(
  'custom_object_records',
  {
    id: id(),
    orgId: orgId(),
    objectId: text('object_id')
      .notNull()
      .references(() => customObjects.id, { onDelete: 'cascade' }),
    values: jsonb('values').$type<Record<string, unknown>>().notNull().default({}),
    ownerId: text('owner_id'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('custom_object_records_live_idx')
      .on(t.orgId, t.objectId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('custom_object_records_owner_idx').on(t.orgId, t.ownerId),
    index('custom_object_records_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

/** A promise made in a conversation with a lead, kept in its conversation memory. */
export interface Commitment {
  text: string;
  due_at: string | null;
  status: 'open' | 'kept' | 'missed';
  note: string | null;
  created_at: string;
  created_by: string | null;
  /** When it was marked kept or missed. */
  resolved_at: string | null;
}

/** What assistants remember of the conversations with a lead: a summary and the commitments made. */
export const conversationMemories = pgTable('conversation_memories', {
  leadId: text('lead_id')
    .primaryKey()
    .references(() => leads.id, { onDelete: 'cascade' }),
  orgId: orgId(),
  summary: text('summary'),
  commitments: jsonb('commitments').$type<Commitment[]>().notNull().default([]),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export type ContactRow = typeof contacts.$inferSelect;
export type OpportunityRow = typeof opportunities.$inferSelect;
export type ActivityRow = typeof activities.$inferSelect;
export type TaskRow = typeof tasks.$inferSelect;
export type SmartViewRow = typeof smartViews.$inferSelect;
export type CustomObjectRow = typeof customObjects.$inferSelect;
export type CustomObjectRecordRow = typeof customObjectRecords.$inferSelect;
export type CustomActivityTypeRow = typeof customActivityTypes.$inferSelect;
export type ConversationMemoryRow = typeof conversationMemories.$inferSelect;
