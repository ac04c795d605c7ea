// The document's `webhooks` section (OpenAPI 3.1): one entry per event, the signed POST the server
// sends to a subscription's URL. The envelope and headers are what workers/deliver.ts sends
// (docs/webhooks.md "The request"); `data` is the event's declared payload schema.
import { z } from 'zod';
import { schemaOf } from './components.ts';
import type { JsonSchema, OperationObject, ParameterObject } from './types.ts';

/** An event as the document shows it: its name and the JSON Schema of its `data`. */
export interface WebhookEvent {
  name: string;
  data: JsonSchema;
}

function header(name: string, description: string, pattern?: string): ParameterObject {
  return {
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string', ...(pattern ? { pattern } : {}) },
  };
}

/** The headers every delivery carries, in the order docs/webhooks.md lists them. */
const DELIVERY_HEADERS: readonly ParameterObject[] = [
  header('X-CRM-Event', 'The event name, the same as `event` in the body.'),
  header(
    'X-CRM-Signature',
    'Lowercase hex HMAC-SHA256 of the raw body bytes, keyed with the subscription secret as configured.',
    '^[0-9a-f]{64}$',
  ),
  header('X-CRM-Delivery-Id', 'The delivery id: the same on every attempt and replay. De-duplicate by it.'),
  header('webhook-id', 'Standard Webhooks: the delivery id.'),
  header('webhook-timestamp', 'Standard Webhooks: the send time in Unix seconds.', '^[0-9]+$'),
  header(
    'webhook-signature',
    'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`.',
  ),
];

/** The body of a delivery of `event`, without its `data` (added as its declared JSON Schema). */
function envelopeOf(event: string): JsonSchema {
  const envelope = z
    .object({
      event: z.literal(event).describe('The event name'),
      org_id: z.string().describe('Your organization id'),
      timestamp: z
        .string()
        .describe('ISO 8601 time of this attempt; retries and replays get a new one (and new signatures)'),
    })
    .describe(`A ${event} delivery`);
  return schemaOf(envelope, 'output', `Webhook ${event}`);
}

function deliveryOf(event: WebhookEvent): OperationObject {
  const envelope = envelopeOf(event.name);
  const properties = typeof envelope.properties === 'object' ? envelope.properties : {};
  const required = Array.isArray(envelope.required) ? envelope.required : [];
  const body: JsonSchema = {
    ...envelope,
    properties: { ...properties, data: event.data },
    required: [...required, 'data'],
  };
  return {
    operationId: `webhook_${event.name.replace(/\./g, '_')}`,
    summary: `${event.name} delivery`,
    description:
      `Sent to every active subscription of the organization listing \`${event.name}\`` +
      `${event.name === 'webhook.test' ? ' (only by the test endpoint: nobody subscribes to it)' : ''}. ` +
      'Verify a signature before trusting the body; see docs/webhooks.md.',
    tags: ['webhooks'],
    parameters: [...DELIVERY_HEADERS],
    requestBody: { required: true, content: { 'application/json': { schema: body } } },
    responses: {
      '2XX': {
        description:
          'Any 2xx within 15 seconds acknowledges the delivery. Anything else (another status, a redirect, a timeout) fails the attempt: 3 attempts in total.',
      },
    },
    security: [],
  };
}

/** The `webhooks` section: one POST per event, keyed by the event name. */
export function webhookItems(events: readonly WebhookEvent[]): Record<string, { post: OperationObject }> {
  return Object.fromEntries(events.map((event) => [event.name, { post: deliveryOf(event) }]));
}

/**
 * Every event of the catalogue (core/catalogue.ts `eventSchemas`, in its order) with the JSON Schema
 * of its `data`.
 */
export function webhookEvents(schemas: ReadonlyMap<string, z.ZodType>): WebhookEvent[] {
  return [...schemas].map(([name, schema]) => ({ name, data: schemaOf(schema, 'output', `Event ${name}`) }));
}
