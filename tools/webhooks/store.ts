// The webhooks store: which events may be subscribed to, the subscription and delivery-log record shapes,
// reading, creating, changing and deleting subscriptions, and the log rows the test and replay
// tools write. A log row's `webhook.deliver` job is enqueued only once the transaction has
// committed, so a job never looks for a row that is not there yet; the attempt itself (signing,
// SSRF guard, retries) belongs to the delivery engine in deliver.ts.
import { and, asc, count, desc, eq, ilike, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { roleHolds } from '../../core/access.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError } from '../../core/errors.ts';
import type { EventName } from '../../core/events.ts';
import { newId } from '../../core/ids.ts';
import { offsetOf, type Page, paged } from '../../core/schemas.ts';
import type { ToolContext } from '../../core/tool.ts';
import { generateWebhookSecret } from '../../core/webhook-secret.ts';
import { webhooksCatalogue } from './catalogue.ts';
import { type WebhookDeliveryRow, type WebhookRow, webhookDeliveries, webhooks } from './tables.ts';

/**
 * The events a subscription may list: every event of the catalogue (core/catalogue.ts, the
 * specification's names for areas not built yet included) but `webhook.test`, which only the test
 * endpoint sends, so nobody subscribes to it.
 */
export function subscribableEvents(names: readonly EventName[]): readonly EventName[] {
  return names.filter((name) => name !== 'webhook.test');
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

const TEST_MESSAGE = 'Test delivery from the CRM';

// --- Records ---------------------------------------------------------------------------------

export const webhookSchema = z
  .object({
    _id: z.string().describe('Subscription id (24 hex characters)'),
    url: z.string().describe('The https:// URL deliveries are POSTed to'),
    events: z.array(z.string().describe('An event name')).describe('Events this subscription receives'),
    is_active: z
      .boolean()
      .describe('Whether events are delivered; an inactive subscription receives nothing'),
    created_by: z.string().nullable().describe('Id of the user who created it, or null if unknown'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
    secret_set: z
      .literal(true)
      .describe('Always true: a signing secret is set. The secret itself is never returned.'),
  })
  .describe('A webhook subscription (the secret is never returned)');
export type WebhookRecord = z.infer<typeof webhookSchema>;

export function serializeWebhook(row: WebhookRow): WebhookRecord {
  return {
    _id: row.id,
    url: row.url,
    events: [...row.events],
    is_active: row.isActive,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    secret_set: true,
  };
}

const attemptSchema = z.object({
  at: z.string().describe('When the attempt started (ISO 8601)'),
  status_code: z
    .number()
    .int()
    .nullable()
    .describe("The receiver's HTTP status, or null when none came back"),
  error: z
    .string()
    .nullable()
    .describe('Why the attempt failed without a usable response (timeout, network, redirect, ...), or null'),
  duration_ms: z.number().describe('How long the attempt took, in milliseconds'),
  response_excerpt: z.string().nullable().describe("The start of the receiver's response body, or null"),
  next_attempt_at: z
    .string()
    .nullable()
    .describe('When the next automatic attempt is due (ISO 8601), or null when none follows'),
});

export const deliverySchema = z
  .object({
    _id: z
      .string()
      .describe('Delivery id: the X-CRM-Delivery-Id / webhook-id receivers see on every attempt'),
    webhook_id: z.string().describe('The subscription it belongs to'),
    event: z.string().describe('Event name, e.g. lead.created or webhook.test'),
    status: z.enum(DELIVERY_STATUSES).describe('pending (attempts still to come), succeeded or failed'),
    data: z.record(z.string(), z.unknown()).describe('The event data sent as the body field `data`'),
    attempts: z.array(attemptSchema).describe('Every attempt made so far, oldest first'),
    created_at: z.string().describe('When the delivery was created (ISO 8601)'),
    updated_at: z.string().describe('Last change, e.g. the latest attempt (ISO 8601)'),
  })
  .describe('One delivery of an event to a subscription, with every attempt');
export type DeliveryRecord = z.infer<typeof deliverySchema>;

export const deliveryStatus = z.enum(DELIVERY_STATUSES);

function serializeDelivery(row: WebhookDeliveryRow): DeliveryRecord {
  return {
    _id: row.id,
    webhook_id: row.webhookId,
    event: row.event,
    // A status outside the three would be a bug in the writer; parsing makes it fail loudly.
    status: deliveryStatus.parse(row.status),
    data: row.data,
    attempts: row.attempts.map((a) => ({ ...a })),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// --- Subscriptions ---------------------------------------------------------------------------

type WriteContext = Pick<ToolContext, 'db' | 'auth' | 'now'>;
/** Writing a log row also enqueues its delivery once the transaction has committed. */
type DeliveryContext = Pick<ToolContext, 'db' | 'auth' | 'now' | 'afterCommit' | 'services'>;

export async function findWebhook(db: Executor, orgId: string, id: string): Promise<WebhookRow> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.orgId, orgId)))
    .limit(1);
  if (!row) throw new AppError('not_found', { message: 'Webhook not found' });
  return row;
}

function sortColumn(field: string): PgColumn {
  return field === 'updated_at' ? webhooks.updatedAt : webhooks.createdAt;
}

function orderFor(sort: string | undefined): SQL[] {
  if (!sort) return [desc(webhooks.createdAt), desc(webhooks.id)];
  const descending = sort.startsWith('-');
  const dir = descending ? desc : asc;
  // The id breaks ties so pages never overlap.
  return [dir(sortColumn(descending ? sort.slice(1) : sort)), dir(webhooks.id)];
}

/** The secret a new subscription gets: the one given, else a generated `whsec_` one. */
function chooseSecret(given: string | undefined): { secret: string; generated: boolean } {
  if (given !== undefined) return { secret: given, generated: false };
  return { secret: generateWebhookSecret(), generated: true };
}

export interface NewWebhook {
  url: string;
  events: string[];
  secret?: string | undefined;
  is_active: boolean;
}

/** A new subscription; the record carries `secret` only when the secret was generated. */
export async function insertWebhook(
  ctx: WriteContext,
  input: NewWebhook,
): Promise<WebhookRecord & { secret?: string }> {
  const { secret, generated } = chooseSecret(input.secret);
  const [row] = await ctx.db
    .insert(webhooks)
    .values({
      id: newId(ctx.now),
      orgId: ctx.auth.orgId,
      url: input.url,
      events: input.events,
      secret,
      isActive: input.is_active,
      createdBy: ctx.auth.userId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  if (!row) throw new Error('insert returned no webhook');
  // A generated secret is known to nobody else yet: this response is its only showing.
  return generated ? { ...serializeWebhook(row), secret } : serializeWebhook(row);
}

/** A page of the organization's subscriptions; `search` matches part of the URL. */
export async function listWebhookPage(
  db: Executor,
  orgId: string,
  input: Page & { search?: string | undefined; sort?: string | undefined },
) {
  const filters: SQL[] = [eq(webhooks.orgId, orgId)];
  if (input.search) filters.push(ilike(webhooks.url, `%${escapeLike(input.search)}%`));
  const where = and(...filters);
  const [total] = await db.select({ n: count() }).from(webhooks).where(where);
  const rows = await db
    .select()
    .from(webhooks)
    .where(where)
    .orderBy(...orderFor(input.sort))
    .limit(input.limit)
    .offset(offsetOf(input));
  return paged('webhooks', rows.map(serializeWebhook), total?.n ?? 0, input);
}

export interface WebhookChanges {
  url?: string | undefined;
  events?: string[] | undefined;
  secret?: string | undefined;
  is_active?: boolean | undefined;
}

/** Writes the fields sent that differ from the stored subscription; none differing writes nothing. */
export async function writeWebhook(
  ctx: WriteContext,
  id: string,
  input: WebhookChanges,
): Promise<WebhookRecord> {
  const row = await findWebhook(ctx.db, ctx.auth.orgId, id);
  const changes: Partial<Pick<WebhookRow, 'url' | 'events' | 'secret' | 'isActive' | 'updatedAt'>> = {};
  if (input.url !== undefined && input.url !== row.url) changes.url = input.url;
  if (input.events !== undefined && input.events.join(',') !== row.events.join(',')) {
    changes.events = input.events;
  }
  if (input.secret !== undefined && input.secret !== row.secret) changes.secret = input.secret;
  if (input.is_active !== undefined && input.is_active !== row.isActive) changes.isActive = input.is_active;
  if (Object.keys(changes).length === 0) return serializeWebhook(row);
  changes.updatedAt = ctx.now;
  const [updated] = await ctx.db
    .update(webhooks)
    .set(changes)
    .where(and(eq(webhooks.id, row.id), eq(webhooks.orgId, ctx.auth.orgId)))
    .returning();
  if (!updated) throw new AppError('not_found', { message: 'Webhook not found' });
  return serializeWebhook(updated);
}

export async function deleteWebhookRow(db: Executor, orgId: string, id: string): Promise<void> {
  // The deliveries go with it through the foreign key's ON DELETE CASCADE.
  const deleted = await db
    .delete(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.orgId, orgId)))
    .returning({ id: webhooks.id });
  if (deleted.length === 0) throw new AppError('not_found', { message: 'Webhook not found' });
}

// --- Delivery log ----------------------------------------------------------------------------

/**
 * The log of a subscription for someone holding only `settings.webhooks.view_own`: the
 * subscriptions they created. Holding view_global reads every subscription's log.
 */
export function assertMayReadLog(auth: AuthContext, row: WebhookRow): void {
  if (roleHolds(auth.role, webhooksCatalogue.permissions['settings.webhooks.view_global'])) return;
  if (row.createdBy !== auth.userId) throw new AppError('not_found', { message: 'Webhook not found' });
}

/** A `webhook.test` log row for the subscription, pending, with its single attempt enqueued. */
export async function insertTestDelivery(ctx: DeliveryContext, id: string): Promise<DeliveryRecord> {
  const hook = await findWebhook(ctx.db, ctx.auth.orgId, id);
  const [row] = await ctx.db
    .insert(webhookDeliveries)
    .values({
      id: newId(ctx.now),
      orgId: ctx.auth.orgId,
      webhookId: hook.id,
      event: 'webhook.test',
      outboxEventId: null,
      data: { webhook_id: hook.id, message: TEST_MESSAGE, sent_by: ctx.auth.userId },
      status: 'pending',
      attempts: [],
      nextAttemptAt: ctx.now,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  if (!row) throw new Error('insert returned no delivery');
  const deliveryId = row.id;
  ctx.afterCommit(() =>
    ctx.services.queue.enqueue('webhook.deliver', { deliveryId, single: true }, { jobId: deliveryId }),
  );
  return serializeDelivery(row);
}

/** A page of a subscription's log, newest first, optionally of one status. */
export async function listDeliveryPage(
  db: Executor,
  orgId: string,
  webhookId: string,
  input: Page & { status?: (typeof DELIVERY_STATUSES)[number] | undefined },
) {
  const filters: SQL[] = [eq(webhookDeliveries.orgId, orgId), eq(webhookDeliveries.webhookId, webhookId)];
  if (input.status) filters.push(eq(webhookDeliveries.status, input.status));
  const where = and(...filters);
  const [total] = await db.select({ n: count() }).from(webhookDeliveries).where(where);
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(where)
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(input.limit)
    .offset(offsetOf(input));
  return paged('deliveries', rows.map(serializeDelivery), total?.n ?? 0, input);
}

/** Turns a finished delivery pending again and enqueues its one replay attempt. */
export async function replayDelivery(ctx: DeliveryContext, id: string): Promise<DeliveryRecord> {
  // Locked, so parallel replays of one delivery take turns: the first turns it pending, and every
  // later one reads that committed status and is refused below. Exactly one replay is accepted
  // and exactly one attempt is enqueued.
  const [row] = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.orgId, ctx.auth.orgId)))
    .limit(1)
    .for('update');
  if (!row) throw new AppError('not_found', { message: 'Delivery not found' });
  // A pending delivery still has an attempt scheduled; a replay beside it would race that attempt.
  if (row.status === 'pending') {
    throw new AppError('invalid_operation', {
      message: 'This delivery is still pending; replay it once its attempts have finished',
    });
  }
  const [updated] = await ctx.db
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: ctx.now, updatedAt: ctx.now })
    .where(and(eq(webhookDeliveries.id, row.id), eq(webhookDeliveries.orgId, ctx.auth.orgId)))
    .returning();
  if (!updated) throw new AppError('not_found', { message: 'Delivery not found' });
  const deliveryId = updated.id;
  // One job id per replay: a second replay after this one finishes must not be de-duplicated away.
  const jobId = `${deliveryId}:replay:${updated.attempts.length + 1}`;
  ctx.afterCommit(() =>
    ctx.services.queue.enqueue('webhook.deliver', { deliveryId, single: true }, { jobId }),
  );
  return serializeDelivery(updated);
}
