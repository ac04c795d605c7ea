// The provider hooks' signature check: Twilio signs each request it sends (status callbacks,
// inbound messages and calls) with the account's auth token over the full URL it called and the
// POST parameters (`X-Twilio-Signature`, HMAC-SHA1, base64). The check is the `twilio` package's own
// validator, so it follows Twilio's rules (ports, escaped URLs) rather than a copy of them.
import webhooks from 'twilio/lib/webhooks/webhooks.js';
import type { Services } from '../../core/services.ts';

/** Form parameters as a hook received them; a repeated name (MediaUrl) carries each of its values. */
export type HookParams = Readonly<Record<string, string | readonly string[]>>;

/**
 * True when `signature` (the `X-Twilio-Signature` header) is Twilio's signature of a POST of
 * `params` to `url` with `authToken`. A missing or empty signature is false.
 */
export function isValidTwilioSignature(
  authToken: string,
  url: string,
  params: HookParams,
  signature: string | null | undefined,
): boolean {
  if (!signature) return false;
  // The validator sorts the names and a repeated name's values itself; it takes mutable arrays.
  const copy: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(params))
    copy[name] = typeof value === 'string' ? value : [...value];
  return webhooks.validateRequest(authToken, signature, url, copy);
}

/** The absolute URL of one of the server's hooks (PUBLIC_BASE_URL + path): the URL Twilio calls and signs. */
export function hookUrl(services: Pick<Services, 'config'>, path: string): string {
  return `${services.config.publicBaseUrl}${path.startsWith('/') ? path : `/${path}`}`;
}
