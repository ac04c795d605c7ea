// The inbound email hook, POST /hooks/email/{inbound_token}: a mail provider (Mailgun's "store and
// notify" route, or anything speaking the same JSON) posts each mail that arrived for a connected
// account. No user token: the path token names the account (looked up by its SHA-256), and the body
// is signed the Mailgun way, `signature` = hex HMAC-SHA256(key = the account's inbound signing key,
// data = timestamp + token), compared in constant time, with a 5-minute replay window.
//
// Order of checks: unknown path token -> plain 404; the signature fields missing or malformed, a
// bad signature or a stale timestamp -> 401 (an unsigned request is as unauthenticated as a badly
// signed one); only then the rest of the body is checked: the input guard (core/safe-input.ts: NUL,
// lone surrogates) and the mail's fields, each a 400 naming the field, so an unauthenticated caller
// learns nothing about a mail's contents rules, and nothing the database cannot store reaches it
// (a 500 would be retried by the provider for ever). Last, in the recording transaction, the
// signing token is remembered for 10 minutes: a replay of a captured request is a 401 and records
// nothing (inbound-store.ts). The per-IP public limit (60 a minute) is applied where the route is
// mounted (rest/public-pages.ts).
import { createHmac, timingSafeEqual } from 'node:crypto';
import addressparser from 'nodemailer/lib/addressparser';
import { z } from 'zod';
import type { EmailReceivedHook, PublicRoute, ReplyTargetHook } from '../../core/area.ts';
import { AppError, toAppError } from '../../core/errors.ts';
import { zodDetails } from '../../core/invoke.ts';
import type { Services } from '../../core/services.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { type InboundMail, recordInboundEmail } from './inbound-store.ts';
import { findAccountByInboundToken, inboundSigningKeyOf } from './store.ts';

/** How far a request's timestamp may be from our clock, either way. */
const REPLAY_WINDOW_SECONDS = 5 * 60;

/** The token of the path: 32 random bytes in base64url (43 characters). */
const INBOUND_TOKEN = /^[A-Za-z0-9_-]{43}$/;

const signed = z.object({
  timestamp: z
    .union([z.number().int(), z.string().regex(/^\d{1,12}$/, 'must be Unix seconds')])
    .transform(Number)
    .describe('Unix time in seconds when the provider signed the request'),
  token: z.string().min(1).max(200).describe("The provider's random token (signed with the timestamp)"),
  signature: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters')
    .describe('Hex HMAC-SHA256 of timestamp + token'),
});

const headerText = (max: number) => z.string().max(max).refine(NO_NUL, nulMessage);

/** One address (`a@b.c` or `Name <a@b.c>`), lower-cased, or null. */
function singleAddress(value: string): string | null {
  const parsed = addressparser(value, { flatten: true });
  const only = parsed.length === 1 ? parsed[0] : undefined;
  if (!only || !z.email().safeParse(only.address).success) return null;
  return only.address.toLowerCase();
}

/** Every address of a list (`a@b.c, Name <d@e.f>`), or null when one is not valid or none is given. */
function addressList(value: string): string[] | null {
  const parsed = addressparser(value, { flatten: true });
  if (parsed.length === 0) return null;
  const out: string[] = [];
  for (const entry of parsed) {
    if (!z.email().safeParse(entry.address).success) return null;
    out.push(entry.address.toLowerCase());
  }
  return out;
}

/** `<id@host>` from `<id@host>` or a bare `id@host`. */
function normalizeMessageId(value: string): string {
  const trimmed = value.trim();
  return trimmed.startsWith('<') ? trimmed : `<${trimmed}>`;
}

/** The Message-IDs an In-Reply-To names (one or several `<...>`; a bare one accepted). */
function messageIdsOf(value: string): string[] {
  const bracketed = value.match(/<[^<>\s]+>/g);
  if (bracketed) return bracketed;
  const trimmed = value.trim();
  return trimmed === '' ? [] : [normalizeMessageId(trimmed)];
}

const MESSAGE_ID = /^<?[^<>\s]+>?$/;

const mailBody = z.object({
  from: headerText(998)
    .refine((s) => singleAddress(s) !== null, 'must be one email address (a@b.c or Name <a@b.c>)')
    .describe('The sender'),
  to: headerText(4000)
    .refine((s) => addressList(s) !== null, 'must be one or more email addresses, comma-separated')
    .describe('The recipients'),
  subject: headerText(998).describe('The subject, at most 998 characters'),
  text: z.string().refine(NO_NUL, nulMessage).optional().describe('The plain-text body'),
  html: z.string().refine(NO_NUL, nulMessage).optional().describe('The HTML body'),
  message_id: headerText(998)
    .trim()
    .min(1)
    .regex(MESSAGE_ID, 'must be a Message-ID such as <abc@mail.example.com>')
    .describe("The mail's Message-ID"),
  in_reply_to: headerText(4000).nullable().optional().describe('The In-Reply-To header, when present'),
});

function jsonResponse(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

const NOT_FOUND = { error: 'Not found' };
const unauthorized = (message: string) =>
  new AppError('invalid_token', { error: 'Invalid signature', message });

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new AppError('validation_failed', { details: zodDetails(parsed.error) });
  return parsed.data;
}

/** The hex HMAC-SHA256 the provider must have sent (exported for tests and docs examples). */
function inboundSignature(signingKey: string, timestamp: number | string, token: string): string {
  return createHmac('sha256', signingKey).update(`${timestamp}${token}`).digest('hex');
}

/** Throws 401 unless the signature is right and the timestamp within the replay window. */
function assertSigned(signingKey: string, auth: z.output<typeof signed>, raw: unknown, now: Date): void {
  // The signed text is the timestamp exactly as sent (a string "1700000000" or the number).
  const sentTimestamp =
    typeof raw === 'object' && raw !== null && 'timestamp' in raw
      ? String(raw.timestamp)
      : String(auth.timestamp);
  const expected = Buffer.from(inboundSignature(signingKey, sentTimestamp, auth.token), 'hex');
  const given = Buffer.from(auth.signature.toLowerCase(), 'hex');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw unauthorized('The signature does not match this inbound URL');
  }
  if (Math.abs(now.getTime() / 1000 - auth.timestamp) > REPLAY_WINDOW_SECONDS) {
    throw unauthorized('The timestamp is more than 5 minutes away from the server time');
  }
}

/** Reads the validated body into what the store records. */
function inboundMailOf(body: z.output<typeof mailBody>): InboundMail {
  const inReplyTo = body.in_reply_to?.trim() ? body.in_reply_to.trim() : null;
  const bodyText = body.text ?? (body.html === undefined ? null : htmlToText(body.html));
  return {
    fromAddress: singleAddress(body.from) ?? '',
    toAddresses: addressList(body.to) ?? [],
    to: body.to,
    subject: body.subject,
    bodyText,
    messageId: normalizeMessageId(body.message_id),
    inReplyTo,
    inReplyToIds: inReplyTo === null ? [] : messageIdsOf(inReplyTo),
  };
}

/** A readable text of an HTML-only mail for the activity (tags dropped, common entities decoded). */
function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/p>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();
}

/** The hook as a public route; the emailReceived hooks of the other areas run on each new mail. */
export function inboundEmailRoutes(
  hooks: readonly EmailReceivedHook[],
  replyTargets: readonly ReplyTargetHook[] = [],
): PublicRoute[] {
  return [
    {
      method: 'POST',
      path: '/hooks/email/:token',
      async handle(request, services: Services) {
        const token = request.params.token ?? '';
        try {
          const account = INBOUND_TOKEN.test(token)
            ? await findAccountByInboundToken(services.db.system, token)
            : null;
          if (!account) return jsonResponse(NOT_FOUND, 404);
          const now = new Date();
          const body = await request.body();
          const auth = signed.safeParse(body);
          if (!auth.success)
            throw unauthorized('The request must carry timestamp, token and signature (hex HMAC-SHA256)');
          assertSigned(inboundSigningKeyOf(services, account), auth.data, body, now);
          const mail = inboundMailOf(parse(mailBody, body));
          const outcome = await recordInboundEmail(
            services,
            account,
            mail,
            hooks,
            now,
            auth.data.token,
            replyTargets,
          );
          return jsonResponse(
            outcome.status === 'duplicate'
              ? { status: 'duplicate' }
              : { status: 'received', inbound_email_id: outcome.inboundEmailId },
            200,
          );
        } catch (err) {
          const error = toAppError(err);
          if (error.code === 'internal') {
            services.logger.error({ err, requestId: request.requestId }, 'inbound email hook failed');
          }
          return jsonResponse(error.body, error.status);
        }
      },
    },
  ];
}
