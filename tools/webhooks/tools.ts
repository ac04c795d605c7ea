// Webhook subscriptions and their delivery log: create, list, read, update, delete, send a test,
// read the log, replay an entry. The attempt itself (signing, SSRF guard, retries) belongs to the
// delivery engine in workers/; these tools only write log rows and enqueue `webhook.deliver` jobs
// once their transaction has committed, so a job never looks for a row that is not there yet.
import { and, asc, count, desc, eq, ilike, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { roleHas } from '../../core/access.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError } from '../../core/errors.ts';
import { EVENT_NAMES, type EventName } from '../../core/events.ts';
import { newId } from '../../core/ids.ts';
import { listParams, messageOutput, objectId, offsetOf, paged, pagedOutput } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import { describeStandardSecretProblem, generateWebhookSecret } from '../../core/webhook-secret.ts';
import { type WebhookDeliveryRow, type WebhookRow, webhookDeliveries, webhooks } from './tables.ts';

const TOOLSET = 'webhooks';
const FEATURE = 'webhooks';

/** `webhook.test` is sent only by the test endpoint, so nobody subscribes to it. */
export const SUBSCRIBABLE_EVENTS: readonly EventName[] = EVENT_NAMES.filter(
  (name) => name !== 'webhook.test',
);

function isSubscribable(value: string): boolean {
  return SUBSCRIBABLE_EVENTS.some((name) => name === value);
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

const deliveryStatus = z.enum(DELIVERY_STATUSES);

export function serializeDelivery(row: WebhookDeliveryRow): DeliveryRecord {
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

// --- Fields ----------------------------------------------------------------------------------

/** https://, a host and no user info: what isHttpsUrl and hasNoUserInfo accept, as a pattern. */
const HTTPS_URL_PATTERN = '^\\s*[Hh][Tt][Tt][Pp][Ss]://[^/?#@\\s]+([/?#]\\S*)?\\s*$';

function isHttpsUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' && url.hostname.length > 0;
}

/**
 * Credentials in the URL (`https://user:pass@host/`) would be stored and shown in every listing,
 * and the delivery engine refuses them anyway: they are refused when the URL is given instead.
 */
function hasNoUserInfo(value: string): boolean {
  if (!URL.canParse(value)) return true;
  const url = new URL(value);
  return url.username === '' && url.password === '';
}

const urlField = z
  .string()
  .trim()
  .max(2000)
  .refine(isHttpsUrl, { message: 'must be a valid https:// URL' })
  .refine(hasNoUserInfo, {
    message: 'must not contain a user name or password (user:password@); authenticate with the signature',
  })
  // The refinements above in JSON Schema terms, for the OpenAPI document and MCP clients.
  .meta({ pattern: HTTPS_URL_PATTERN })
  .describe(
    'The receiving URL: https:// only, without user:password@, at most 2000 characters. Private or loopback targets are accepted here but refused at delivery time (the SSRF guard checks every attempt).',
  );

const eventsField = z
  .array(
    z
      .string()
      .describe('An event name from the specification, e.g. lead.created')
      // The superRefine below checks this list; the enum shows it in JSON Schema.
      .meta({ enum: [...SUBSCRIBABLE_EVENTS] }),
  )
  .min(1, { message: 'must name at least one event' })
  .superRefine((names, check) => {
    names.forEach((name, index) => {
      if (!isSubscribable(name)) {
        check.addIssue({
          code: 'custom',
          path: [index],
          message: `unknown event "${name}"; valid events: ${SUBSCRIBABLE_EVENTS.join(', ')}`,
        });
      }
    });
  })
  .transform((names) => [...new Set(names)])
  .describe(
    `Events to receive (at least one; duplicates are dropped): ${SUBSCRIBABLE_EVENTS.join(', ')}. webhook.test is sent only by test_webhook and cannot be subscribed to.`,
  );

const secretField = z
  .string()
  .min(16)
  .max(200)
  .superRefine((secret, check) => {
    const problem = describeStandardSecretProblem(secret);
    if (problem !== null) check.addIssue({ code: 'custom', message: problem });
  })
  .describe(
    'Signing secret, 16 to 200 characters, never returned. X-CRM-Signature is keyed with the secret string as given. A secret of the Standard Webhooks form `whsec_<base64>` (standard padded base64 of at least 24 bytes) keys webhook-signature with the decoded bytes, so the Standard Webhooks and Svix libraries verify it as configured; any other secret keys it with its UTF-8 bytes.',
  );

const activeField = z.boolean().describe('Whether events are delivered; false pauses the subscription');

const webhookId = objectId('webhook subscription');
const webhookOutput = z.object({ webhook: webhookSchema });
const createdWebhookOutput = z.object({
  webhook: webhookSchema
    .extend({
      secret: z
        .string()
        .optional()
        .describe(
          'Only when the request gave no secret: the generated `whsec_` secret. Shown this once and never again, so store it now.',
        ),
    })
    .describe('The new subscription; it carries `secret` only when the secret was generated'),
});
const deliveryOutput = z.object({ delivery: deliverySchema });

// --- Data access -----------------------------------------------------------------------------

async function findWebhook(db: Executor, orgId: string, id: string): Promise<WebhookRow> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.orgId, orgId)))
    .limit(1);
  if (!row) throw new AppError('not_found', { message: 'Webhook not found' });
  return row;
}

/**
 * The log of a subscription for someone holding only `settings.webhooks.view_own`: the
 * subscriptions they created. Holding view_global reads every subscription's log.
 */
function assertMayReadLog(auth: AuthContext, row: WebhookRow): void {
  if (roleHas(auth.role, 'settings.webhooks.view_global')) return;
  if (row.createdBy !== auth.userId) throw new AppError('not_found', { message: 'Webhook not found' });
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

// --- Tools -----------------------------------------------------------------------------------

export const createWebhook = defineTool({
  name: 'create_webhook',
  title: 'Create webhook subscription',
  description:
    "Subscribes an HTTPS URL to events of the caller's organization: each subscribed event is POSTed there as signed JSON (X-CRM-Signature: hex HMAC-SHA256 of the body keyed with `secret`; Standard Webhooks headers too). `name` is required and checked (1-200 characters) but not stored. `url` must be https:// without user:password@; a private or loopback address is accepted now and refused at delivery time. `events` lists at least one event name; an unknown name is a 400 naming it. `secret` (16-200 characters; `whsec_<base64>` for the Standard Webhooks libraries) is optional: leave it out and a `whsec_` secret is generated and returned once as `webhook.secret`. A secret you give is never returned: the record shows `secret_set: true`. `is_active` defaults to true. Needs a plan with webhooks (402 otherwise). Use test_webhook afterwards to check the receiver.",
  input: z.strictObject({
    name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .describe('A name for the subscription, 1 to 200 characters (validated, not stored)'),
    url: urlField,
    events: eventsField,
    secret: secretField
      .optional()
      .describe(
        'Signing secret, 16 to 200 characters, never returned; optional: left out, a `whsec_` secret is generated and returned once. X-CRM-Signature is keyed with the secret string as given. A secret of the Standard Webhooks form `whsec_<base64>` (standard padded base64 of at least 24 bytes) keys webhook-signature with the decoded bytes, so the Standard Webhooks and Svix libraries verify it as configured; any other secret keys it with its UTF-8 bytes.',
      ),
    is_active: activeField.default(true).describe('Whether events are delivered (default true)'),
  }),
  output: createdWebhookOutput,
  access: { kind: 'write', resource: 'webhooks', permission: 'settings.webhooks.create', feature: FEATURE },
  toolset: TOOLSET,
  async handler(input, ctx) {
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
    return { webhook: generated ? { ...serializeWebhook(row), secret } : serializeWebhook(row) };
  },
});

export const listWebhooks = defineTool({
  name: 'list_webhooks',
  title: 'List webhook subscriptions',
  description:
    "Lists the organization's webhook subscriptions, newest first by default (sort by created_at or updated_at, prefix - for descending); `search` matches part of the URL. Secrets are never returned. Paged: returns `webhooks` plus `total`, `page`, `limit`, `totalPages`; request page 1, then increment `page` until page >= totalPages. `limit` is 1-100 (default 25).",
  input: z.strictObject({ ...listParams(['created_at', 'updated_at']) }),
  output: pagedOutput('webhooks', webhookSchema),
  access: {
    kind: 'read',
    resource: 'webhooks',
    permission: 'settings.webhooks.view_global',
    feature: FEATURE,
  },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const filters: SQL[] = [eq(webhooks.orgId, ctx.auth.orgId)];
    if (input.search) filters.push(ilike(webhooks.url, `%${escapeLike(input.search)}%`));
    const where = and(...filters);
    const [total] = await ctx.db.select({ n: count() }).from(webhooks).where(where);
    const rows = await ctx.db
      .select()
      .from(webhooks)
      .where(where)
      .orderBy(...orderFor(input.sort))
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('webhooks', rows.map(serializeWebhook), total?.n ?? 0, input);
  },
});

export const getWebhook = defineTool({
  name: 'get_webhook',
  title: 'Get webhook subscription',
  description:
    'Returns one webhook subscription of the organization by id: URL, events, is_active, creator and times. The secret is never returned (`secret_set` is always true). Another organization\'s id is "Not found".',
  input: z.strictObject({ id: webhookId }),
  output: webhookOutput,
  access: {
    kind: 'read',
    resource: 'webhooks',
    permission: 'settings.webhooks.view_global',
    feature: FEATURE,
  },
  toolset: TOOLSET,
  async handler(input, ctx) {
    return { webhook: serializeWebhook(await findWebhook(ctx.db, ctx.auth.orgId, input.id)) };
  },
});

export const updateWebhook = defineTool({
  name: 'update_webhook',
  title: 'Update webhook subscription',
  description:
    'Changes a webhook subscription: one or more of `url` (https:// only, without user:password@), `events` (replaces the whole list; at least one known event), `secret` (16-200 characters, `whsec_<base64>` for the Standard Webhooks libraries, never returned; deliveries made from now on are signed with it) and `is_active` (false pauses deliveries, true resumes them). Give at least one; fields left out stay as they are. Returns the updated record.',
  input: z
    .strictObject({
      id: webhookId,
      url: urlField.optional(),
      events: eventsField.optional(),
      secret: secretField.optional(),
      is_active: activeField.optional(),
    })
    .refine(
      (v) =>
        v.url !== undefined || v.events !== undefined || v.secret !== undefined || v.is_active !== undefined,
      { message: 'Give at least one of url, events, secret, is_active' },
    )
    .meta({ anyOf: ['url', 'events', 'secret', 'is_active'].map((name) => ({ required: [name] })) }),
  output: webhookOutput,
  access: { kind: 'write', resource: 'webhooks', permission: 'settings.webhooks.edit', feature: FEATURE },
  annotations: { idempotentHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const row = await findWebhook(ctx.db, ctx.auth.orgId, input.id);
    const changes: Partial<Pick<WebhookRow, 'url' | 'events' | 'secret' | 'isActive' | 'updatedAt'>> = {};
    if (input.url !== undefined && input.url !== row.url) changes.url = input.url;
    if (input.events !== undefined && input.events.join(',') !== row.events.join(',')) {
      changes.events = input.events;
    }
    if (input.secret !== undefined && input.secret !== row.secret) changes.secret = input.secret;
    if (input.is_active !== undefined && input.is_active !== row.isActive) changes.isActive = input.is_active;
    if (Object.keys(changes).length === 0) return { webhook: serializeWebhook(row) };
    changes.updatedAt = ctx.now;
    const [updated] = await ctx.db
      .update(webhooks)
      .set(changes)
      .where(and(eq(webhooks.id, row.id), eq(webhooks.orgId, ctx.auth.orgId)))
      .returning();
    if (!updated) throw new AppError('not_found', { message: 'Webhook not found' });
    return { webhook: serializeWebhook(updated) };
  },
});

export const deleteWebhook = defineTool({
  name: 'delete_webhook',
  title: 'Delete webhook subscription',
  description:
    'Deletes a webhook subscription for good, together with its delivery log. Nothing more is delivered to its URL, and pending retries are dropped. To pause deliveries instead, use update_webhook with is_active false.',
  input: z.strictObject({ id: webhookId }),
  output: messageOutput,
  access: { kind: 'write', resource: 'webhooks', permission: 'settings.webhooks.delete', feature: FEATURE },
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    // The deliveries go with it through the foreign key's ON DELETE CASCADE.
    const deleted = await ctx.db
      .delete(webhooks)
      .where(and(eq(webhooks.id, input.id), eq(webhooks.orgId, ctx.auth.orgId)))
      .returning({ id: webhooks.id });
    if (deleted.length === 0) throw new AppError('not_found', { message: 'Webhook not found' });
    return { message: 'Webhook deleted' };
  },
});

export const testWebhook = defineTool({
  name: 'test_webhook',
  title: 'Send test webhook',
  description:
    "Sends one `webhook.test` delivery to a subscription's URL now, signed like any other, with data {webhook_id, message, sent_by}. Works for inactive subscriptions too (an explicit test is not an event). Returns the new delivery-log entry while it is still `pending`: exactly one attempt is made, with no retries; read the outcome with list_webhook_deliveries. A private or loopback URL fails at delivery time (SSRF guard), not here.",
  input: z.strictObject({ id: webhookId }),
  output: deliveryOutput,
  access: { kind: 'write', resource: 'webhooks', permission: 'settings.webhooks.edit', feature: FEATURE },
  annotations: { openWorldHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const hook = await findWebhook(ctx.db, ctx.auth.orgId, input.id);
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
    return { delivery: serializeDelivery(row) };
  },
});

// The log takes only page and limit: it is always newest first and has no text to search.
const logParams = listParams(['created_at']);

export const listWebhookDeliveries = defineTool({
  name: 'list_webhook_deliveries',
  title: 'List webhook deliveries',
  description:
    'Reads the delivery log of one webhook subscription, newest first: each entry has the event, its `data`, the status (pending, succeeded, failed) and every attempt (time, HTTP status, error, duration, response excerpt, next attempt). Filter by `status`. A caller holding only settings.webhooks.view_own sees the logs of subscriptions they created. Paged: returns `deliveries` plus `total`, `page`, `limit`, `totalPages`; request page 1, then increment `page` until page >= totalPages. `limit` is 1-100 (default 25).',
  input: z.strictObject({
    id: webhookId,
    status: deliveryStatus.optional().describe('Only entries with this status: pending, succeeded or failed'),
    page: logParams.page,
    limit: logParams.limit,
  }),
  output: pagedOutput('deliveries', deliverySchema),
  access: { kind: 'read', resource: 'webhooks', permission: 'settings.webhooks.view_own', feature: FEATURE },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const hook = await findWebhook(ctx.db, ctx.auth.orgId, input.id);
    assertMayReadLog(ctx.auth, hook);
    const filters: SQL[] = [
      eq(webhookDeliveries.orgId, ctx.auth.orgId),
      eq(webhookDeliveries.webhookId, hook.id),
    ];
    if (input.status) filters.push(eq(webhookDeliveries.status, input.status));
    const where = and(...filters);
    const [total] = await ctx.db.select({ n: count() }).from(webhookDeliveries).where(where);
    const rows = await ctx.db
      .select()
      .from(webhookDeliveries)
      .where(where)
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('deliveries', rows.map(serializeDelivery), total?.n ?? 0, input);
  },
});

export const replayWebhookDelivery = defineTool({
  name: 'replay_webhook_delivery',
  title: 'Replay webhook delivery',
  errors: [{ code: 'invalid_operation', when: 'the delivery is still pending' }],
  description:
    'Sends a past delivery again: same delivery id (receivers can de-duplicate on it), same event and data, a new timestamp and signature. Exactly one attempt is made, with no automatic retries; the entry turns `pending` and its attempts grow by one (read them with list_webhook_deliveries). Use it after fixing a receiver that failed. A delivery still pending cannot be replayed (400): wait for its attempts to finish. Works for inactive subscriptions too.',
  input: z.strictObject({ deliveryId: objectId('delivery') }),
  output: deliveryOutput,
  access: { kind: 'write', resource: 'webhooks', permission: 'settings.webhooks.edit', feature: FEATURE },
  annotations: { openWorldHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    // Locked, so parallel replays of one delivery take turns: the first turns it pending, and every
    // later one reads that committed status and is refused below. Exactly one replay is accepted
    // and exactly one attempt is enqueued.
    const [row] = await ctx.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.id, input.deliveryId), eq(webhookDeliveries.orgId, ctx.auth.orgId)))
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
    return { delivery: serializeDelivery(updated) };
  },
});

export const webhookTools = [
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  testWebhook,
  listWebhookDeliveries,
  replayWebhookDelivery,
];
