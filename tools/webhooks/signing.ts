// Webhook signatures: the specified X-CRM-Signature (hex HMAC-SHA256 of the raw body) and the
// Standard Webhooks headers (docs/contracts.md "Webhook deliveries"), plus the receiver-side checks
// that docs/webhooks.md describes, so tests verify deliveries exactly the way a customer would.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { decodeStandardSecret } from '../../core/webhook-secret.ts';

const HEX_SIGNATURE = /^[0-9a-f]{64}$/;
const TIMESTAMP = /^\d{1,15}$/;
const DEFAULT_TOLERANCE_SECONDS = 300;

function toBuffer(body: Uint8Array | string): Buffer {
  return typeof body === 'string'
    ? Buffer.from(body, 'utf8')
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/**
 * X-CRM-Signature: lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the secret string
 * as given (its UTF-8 bytes), `whsec_` secrets included: the specification keys it with the secret.
 */
export function signPayload(secret: string, body: Uint8Array | string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(toBuffer(body)).digest('hex');
}

/**
 * The Standard Webhooks key: the decoded bytes of a `whsec_<base64>` secret, as the official
 * receiver libraries decode it, else the secret's UTF-8 bytes. A stored `whsec_` secret whose
 * remainder is not canonical base64 (only possible for rows written before creation checked it)
 * keeps the UTF-8 key it was signed with before.
 */
function standardWebhookKey(secret: string): Buffer {
  return decodeStandardSecret(secret) ?? Buffer.from(secret, 'utf8');
}

function standardDigest(
  secret: string,
  id: string,
  timestampSeconds: number | string,
  body: Uint8Array | string,
): Buffer {
  return createHmac('sha256', standardWebhookKey(secret))
    .update(`${id}.${timestampSeconds}.`, 'utf8')
    .update(toBuffer(body))
    .digest();
}

/**
 * webhook-signature: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with standardWebhookKey
 * (the decoded bytes of a `whsec_` secret, else the secret's UTF-8 bytes).
 */
export function standardWebhookSignature(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: Uint8Array | string,
): string {
  return `v1,${standardDigest(secret, id, timestampSeconds, body).toString('base64')}`;
}

/** Both delivery signatures with their keys derived once: a batch signs many bodies with one secret. */
export interface WebhookSigner {
  /** X-CRM-Signature, as {@link signPayload}. */
  crm(body: Buffer): string;
  /** webhook-signature, as {@link standardWebhookSignature}. */
  standard(id: string, timestampSeconds: number, body: Buffer): string;
}

export function webhookSigner(secret: string): WebhookSigner {
  const crmKey = Buffer.from(secret, 'utf8');
  const standardKey = standardWebhookKey(secret);
  return {
    crm: (body) => createHmac('sha256', crmKey).update(body).digest('hex'),
    standard: (id, timestampSeconds, body) =>
      `v1,${createHmac('sha256', standardKey).update(`${id}.${timestampSeconds}.`, 'utf8').update(body).digest('base64')}`,
  };
}

/** Receiver check of X-CRM-Signature over the raw body, in constant time; false when missing or malformed. */
export function verifyWebhookSignature(
  rawBody: Uint8Array | string,
  signatureHeader: string | null | undefined,
  secret: string,
): boolean {
  if (typeof signatureHeader !== 'string') return false;
  const received = signatureHeader.trim().toLowerCase();
  if (!HEX_SIGNATURE.test(received)) return false;
  const expected = Buffer.from(signPayload(secret, rawBody), 'hex');
  return timingSafeEqual(expected, Buffer.from(received, 'hex'));
}

export interface StandardWebhookHeaders {
  id: string | null | undefined;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
}

export interface VerifyStandardOptions {
  /** How far webhook-timestamp may be from now, either way (replay protection). */
  toleranceSeconds?: number;
  /** The current time; defaults to the clock. */
  now?: Date;
}

/**
 * Receiver check of the Standard Webhooks headers: a fresh timestamp (within the tolerance, past or
 * future) and at least one matching `v1,` entry among the space-separated signatures.
 */
export function verifyStandardWebhook(
  rawBody: Uint8Array | string,
  headers: StandardWebhookHeaders,
  secret: string,
  options: VerifyStandardOptions = {},
): boolean {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !TIMESTAMP.test(timestamp)) return false;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) return false;
  const expected = standardDigest(secret, id, timestamp, rawBody);
  let matched = false;
  for (const entry of signature.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const received = Buffer.from(entry.slice(comma + 1), 'base64');
    // Every candidate is compared (no early exit) so timing does not reveal which one matched.
    if (received.length === expected.length && timingSafeEqual(received, expected)) matched = true;
  }
  return matched;
}
