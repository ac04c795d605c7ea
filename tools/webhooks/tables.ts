// The webhooks area's tables: subscriptions and their delivery log.
import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, id, orgId, ts, updatedAt } from '../../core/db/schema.ts';

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

/** One attempt of a delivery, as kept in the delivery log (docs/contracts.md "Webhook deliveries"). */
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
