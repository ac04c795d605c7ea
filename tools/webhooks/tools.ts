// Webhook subscriptions and their delivery log: create, list, read, update, delete, send a test,
// read the log, replay an entry. The attempt itself (signing, SSRF guard, retries) belongs to the
// delivery engine in deliver.ts; the test and replay tools only write log rows and enqueue
// `webhook.deliver` jobs once their transaction has committed. This file declares the tools; the
// data functions are store.ts.
import { z } from 'zod';
import type { EventName } from '../../core/events.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import { describeStandardSecretProblem } from '../../core/webhook-secret.ts';
import {
  assertMayReadLog,
  deleteWebhookRow,
  deliverySchema,
  deliveryStatus,
  findWebhook,
  insertTestDelivery,
  insertWebhook,
  listDeliveryPage,
  listWebhookPage,
  replayDelivery,
  serializeWebhook,
  subscribableEvents,
  webhookSchema,
  writeWebhook,
} from './store.ts';

const TOOLSET = 'webhooks';
const FEATURE = 'webhooks';

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

/** The `events` field: the subscribable events of the catalogue, checked and listed in JSON Schema. */
function eventsFieldOf(names: readonly EventName[]) {
  const subscribable: readonly string[] = subscribableEvents(names);
  return z
    .array(
      z
        .string()
        .describe('An event name from the specification, e.g. lead.created')
        // The superRefine below checks this list; the enum shows it in JSON Schema.
        .meta({ enum: [...subscribable] }),
    )
    .min(1, { message: 'must name at least one event' })
    .superRefine((events, check) => {
      events.forEach((name, index) => {
        if (!subscribable.includes(name)) {
          check.addIssue({
            code: 'custom',
            path: [index],
            message: `unknown event "${name}"; valid events: ${subscribable.join(', ')}`,
          });
        }
      });
    })
    .transform((events) => [...new Set(events)])
    .describe(
      `Events to receive (at least one; duplicates are dropped): ${subscribable.join(', ')}. webhook.test is sent only by test_webhook and cannot be subscribed to.`,
    );
}

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

// --- Tools -----------------------------------------------------------------------------------

/** create_webhook, its `events` checked against the catalogue's event names. */
export function createWebhookTool(events: readonly EventName[]) {
  return defineTool({
    name: 'create_webhook',
    title: 'Create webhook subscription',
    description:
      'Subscribes an HTTPS URL to events of the organization: each event is POSTed there as signed JSON (X-CRM-Signature: hex HMAC-SHA256 of the body keyed with `secret`; Standard Webhooks headers too). An unknown event name is a 400 naming it. Leave `secret` out and a `whsec_` secret is generated and returned once as `webhook.secret`; a secret you give is never returned. Needs a plan with webhooks. Check the receiver with test_webhook.',
    input: z.strictObject({
      name: z
        .string()
        .trim()
        .min(1)
        .max(200)
        .describe('A name for the subscription, 1 to 200 characters (validated, not stored)'),
      url: urlField,
      events: eventsFieldOf(events),
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
      return { webhook: await insertWebhook(ctx, input) };
    },
  });
}

export const listWebhooks = defineTool({
  name: 'list_webhooks',
  title: 'List webhook subscriptions',
  description:
    "Lists the organization's webhook subscriptions, newest first; `search` matches part of the URL. Secrets are never returned.",
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
    return listWebhookPage(ctx.db, ctx.auth.orgId, input);
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

/** update_webhook, its `events` checked against the catalogue's event names. */
export function updateWebhookTool(events: readonly EventName[]) {
  return defineTool({
    name: 'update_webhook',
    title: 'Update webhook subscription',
    description:
      'Changes a webhook subscription: `url`, `events` (replaces the whole list), `secret` (signs deliveries from now on; never returned) and/or `is_active` (false pauses, true resumes). Give at least one; fields left out stay.',
    input: z
      .strictObject({
        id: webhookId,
        url: urlField.optional(),
        events: eventsFieldOf(events).optional(),
        secret: secretField.optional(),
        is_active: activeField.optional(),
      })
      .refine(
        (v) =>
          v.url !== undefined ||
          v.events !== undefined ||
          v.secret !== undefined ||
          v.is_active !== undefined,
        { message: 'Give at least one of url, events, secret, is_active' },
      )
      .meta({ anyOf: ['url', 'events', 'secret', 'is_active'].map((name) => ({ required: [name] })) }),
    output: webhookOutput,
    access: { kind: 'write', resource: 'webhooks', permission: 'settings.webhooks.edit', feature: FEATURE },
    annotations: { idempotentHint: true },
    toolset: TOOLSET,
    async handler(input, ctx) {
      return { webhook: await writeWebhook(ctx, input.id, input) };
    },
  });
}

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
    await deleteWebhookRow(ctx.db, ctx.auth.orgId, input.id);
    return { message: 'Webhook deleted' };
  },
});

export const testWebhook = defineTool({
  name: 'test_webhook',
  title: 'Send test webhook',
  description:
    "Sends one `webhook.test` delivery to a subscription's URL now, signed like any other, also when inactive. Returns the delivery-log entry while `pending` (one attempt, no retries); read the outcome with list_webhook_deliveries. A private or loopback URL fails at delivery time.",
  input: z.strictObject({ id: webhookId }),
  output: deliveryOutput,
  access: { kind: 'write', resource: 'webhooks', permission: 'settings.webhooks.edit', feature: FEATURE },
  reachesWithoutSending: "posts a test event to the organization's own webhook endpoint",
  annotations: { openWorldHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    return { delivery: await insertTestDelivery(ctx, input.id) };
  },
});

// The log takes only page and limit: it is always newest first and has no text to search.
const logParams = listParams(['created_at']);

export const listWebhookDeliveries = defineTool({
  name: 'list_webhook_deliveries',
  title: 'List webhook deliveries',
  description:
    'Reads the delivery log of one webhook subscription, newest first: event, `data`, status (pending, succeeded, failed) and every attempt (time, HTTP status, error, duration, response excerpt, next attempt). With only settings.webhooks.view_own you see the logs of subscriptions you created.',
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
    return listDeliveryPage(ctx.db, ctx.auth.orgId, hook.id, input);
  },
});

export const replayWebhookDelivery = defineTool({
  name: 'replay_webhook_delivery',
  title: 'Replay webhook delivery',
  errors: [{ code: 'invalid_operation', when: 'the delivery is still pending' }],
  description:
    'Sends a past (e.g. failed) webhook delivery again: same delivery id (receivers can de-duplicate on it), event and data, new timestamp and signature. One attempt, no retries; the entry turns `pending` (see list_webhook_deliveries). A delivery still pending cannot be replayed (400). Works for inactive subscriptions too.',
  input: z.strictObject({ deliveryId: objectId('delivery') }),
  output: deliveryOutput,
  access: { kind: 'write', resource: 'webhooks', permission: 'settings.webhooks.edit', feature: FEATURE },
  reachesWithoutSending: "posts a past event again to the organization's own webhook endpoint",
  annotations: { openWorldHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    return { delivery: await replayDelivery(ctx, input.deliveryId) };
  },
});
