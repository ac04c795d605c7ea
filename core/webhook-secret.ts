// Webhook signing secrets in the Standard Webhooks convention (docs/contracts.md "Webhook
// deliveries"): a secret written `whsec_<base64>` stands for the decoded bytes, which is how the
// official Standard Webhooks and Svix receiver libraries read the secret they are configured with.
// Keeping the decoding here, in one place, lets validation (tools/webhooks/tools.ts) and signing
// (tools/webhooks/signing.ts) agree on it.
import { randomBytes } from 'node:crypto';

const STANDARD_SECRET_PREFIX = 'whsec_';

/** Svix generates 24-byte keys; fewer bytes than that is too weak a key to accept. */
const MIN_STANDARD_KEY_BYTES = 24;

/** Generated keys are 32 random bytes: as many as HMAC-SHA256 outputs, a full-strength key. */
const GENERATED_KEY_BYTES = 32;

/** A fresh secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${STANDARD_SECRET_PREFIX}${randomBytes(GENERATED_KEY_BYTES).toString('base64')}`;
}

/**
 * The key bytes of a `whsec_<base64>` secret, or null when the secret lacks the prefix or its
 * remainder is not canonical standard base64 (padded, `+` and `/`). Node's decoder is lenient
 * (it skips stray characters and accepts URL-safe letters) while the receiver libraries are
 * strict, so only a remainder that re-encodes to itself is trusted to decode the same way there.
 */
export function decodeStandardSecret(secret: string): Buffer | null {
  if (!secret.startsWith(STANDARD_SECRET_PREFIX)) return null;
  const encoded = secret.slice(STANDARD_SECRET_PREFIX.length);
  if (encoded.length === 0) return null;
  const key = Buffer.from(encoded, 'base64');
  return key.toString('base64') === encoded ? key : null;
}

/**
 * Why a secret cannot be accepted as a Standard Webhooks secret, or null when it can (or when it
 * does not claim to be one: a plain secret is used as its UTF-8 bytes).
 */
export function describeStandardSecretProblem(secret: string): string | null {
  if (!secret.startsWith(STANDARD_SECRET_PREFIX)) return null;
  const key = decodeStandardSecret(secret);
  if (key === null) {
    return `a secret starting with ${STANDARD_SECRET_PREFIX} must continue with standard padded base64 (A-Z, a-z, 0-9, +, /, =)`;
  }
  if (key.length < MIN_STANDARD_KEY_BYTES) {
    return `a ${STANDARD_SECRET_PREFIX} secret must decode to at least ${MIN_STANDARD_KEY_BYTES} bytes (this one decodes to ${key.length})`;
  }
  return null;
}
