// The provider's public hooks for messages (docs/telephony.md "Messages"), under the per-IP limit of
// public routes. Each names its organization by the `AccountSid` it carries (the telephony area's
// organizationOfAccount) and is checked with that organization's auth token against Twilio's
// signature of the URL it called (hookUrl: PUBLIC_BASE_URL + path); an unknown account, a bad or a
// missing signature is a 403 and nothing is stored.
//
// - POST /hooks/twilio/messaging: an inbound SMS or WhatsApp message, recorded once per MessageSid
//   (a replay meets the unique index and is ignored) on the lead whose live contact has the sender's
//   number (or no lead), with an inbound activity (by the receiving number's owner) and
//   `sms.received`. Answers empty TwiML.
// - POST /hooks/twilio/status: status callbacks. A message's status (MessageSid) moves only forward
//   (queued < sending < sent < delivered, undelivered, failed < read): a late older status, or a
//   replayed one, changes nothing. A call's status (CallSid) goes to the call-status handlers the
//   voice work plugs in (STATUS_HANDLERS); until then it is answered 204 and ignored.
import { and, eq } from 'drizzle-orm';
import type { PublicRequest, PublicRoute } from '../../core/area.ts';
import type { Executor } from '../../core/db/client.ts';
import { toAppError } from '../../core/errors.ts';
import { recordEvent } from '../../core/events.ts';
import { newId } from '../../core/ids.ts';
import type { Services } from '../../core/services.ts';
import { actorAuth, actorContext } from '../../core/system-actor.ts';
import { insertActivity } from '../activities/store.ts';
import { liveContactWithPhone } from '../contacts/lookups.ts';
import { numberByE164 } from '../phone-numbers/lookups.ts';
import { organizationOfAccount } from '../telephony/lookups.ts';
import { type HookParams, hookUrl, isValidTwilioSignature } from '../telephony/signature.ts';
import { STATUS_HOOK_PATH } from './send.ts';
import { serializeMessage } from './store.ts';
import { messages } from './tables.ts';

const MESSAGING_HOOK_PATH = '/hooks/twilio/messaging';

const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';

/** A hook request that passed its signature check: its organization and its parameters. */
export interface SignedHook {
  orgId: string;
  params: HookParams;
  now: Date;
}

/**
 * A handler of the status hook: `matches` says whether a callback is its kind (a message's carries
 * MessageSid, a call's CallSid), `handle` records it and answers. The voice work adds the calls'.
 */
export interface StatusHandler {
  name: string;
  matches(params: HookParams): boolean;
  handle(services: Services, hook: SignedHook): Promise<Response>;
}

function one(params: HookParams, name: string): string | null {
  const value = params[name];
  if (typeof value === 'string') return value;
  return value?.[0] ?? null;
}

/** The form's fields as the signature check reads them: strings, or each value of a repeated name. */
function paramsOf(body: Record<string, unknown>): HookParams {
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(body)) {
    params[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return params;
}

const forbidden = () => new Response('Forbidden', { status: 403, headers: { 'content-type': 'text/plain' } });

/** The request's organization and parameters when Twilio signed it with that organization's token; else null. */
async function signedHook(
  request: PublicRequest,
  services: Services,
  path: string,
): Promise<SignedHook | null> {
  const params = paramsOf(await request.body({ forms: true }));
  const accountSid = one(params, 'AccountSid');
  if (!accountSid) return null;
  const org = await organizationOfAccount(services.db.system, services, accountSid);
  if (!org) return null;
  const signature = request.raw.headers.get('x-twilio-signature');
  if (!isValidTwilioSignature(org.authToken, hookUrl(services, path), params, signature)) return null;
  return { orgId: org.orgId, params, now: new Date() };
}

/** A public hook: the signature check, then `handle`; an unexpected failure is logged and a 500. */
function hookRoute(
  path: string,
  handle: (services: Services, hook: SignedHook) => Promise<Response>,
): PublicRoute {
  return {
    method: 'POST',
    path,
    async handle(request, services) {
      try {
        const hook = await signedHook(request, services, path);
        if (!hook) return forbidden();
        return await handle(services, hook);
      } catch (err) {
        const error = toAppError(err);
        if (error.code === 'internal') {
          services.logger.error({ err, requestId: request.requestId, path }, 'twilio hook failed');
        }
        return new Response(JSON.stringify(error.body), {
          status: error.status,
          headers: { 'content-type': 'application/json' },
        });
      }
    },
  };
}

/** `whatsapp:+1...` -> channel whatsapp and `+1...`. */
function channelAddress(value: string): { channel: 'sms' | 'whatsapp'; e164: string } {
  return value.startsWith('whatsapp:')
    ? { channel: 'whatsapp', e164: value.slice('whatsapp:'.length) }
    : { channel: 'sms', e164: value };
}

/** Records an inbound message once per MessageSid; true when it was new. */
async function recordInbound(services: Services, hook: SignedHook): Promise<boolean> {
  const sid = one(hook.params, 'MessageSid');
  const fromRaw = one(hook.params, 'From');
  const toRaw = one(hook.params, 'To');
  if (!sid || !fromRaw || !toRaw) return false;
  const from = channelAddress(fromRaw);
  const to = channelAddress(toRaw);
  const number = await numberByE164(services.db.system, to.e164);
  const ourNumber = number && number.orgId === hook.orgId ? number : null;
  const body = one(hook.params, 'Body');
  return services.db.withTenant(hook.orgId, async (tx) => {
    const contact = await liveContactWithPhone(tx, hook.orgId, from.e164);
    const [row] = await tx
      .insert(messages)
      .values({
        id: newId(hook.now),
        orgId: hook.orgId,
        channel: from.channel,
        direction: 'inbound',
        leadId: contact?.leadId ?? null,
        phoneNumberId: ourNumber?.id ?? null,
        fromAddress: from.e164,
        toAddress: to.e164,
        body,
        sid,
        status: 'received',
        createdAt: hook.now,
        updatedAt: hook.now,
      })
      .onConflictDoNothing()
      .returning();
    if (!row) return false;
    let recorded = row;
    const activityId = await inboundActivity(tx, hook, contact, ourNumber?.ownerId ?? null, from, body);
    if (activityId) {
      const [updated] = await tx
        .update(messages)
        .set({ activityId })
        .where(and(eq(messages.orgId, hook.orgId), eq(messages.id, row.id)))
        .returning();
      if (updated) recorded = updated;
    }
    await recordEvent(tx, hook.orgId, 'sms.received', serializeMessage(recorded));
    return true;
  });
}

/**
 * The inbound activity on the contact's lead, logged as the receiving number's owner (an activity is
 * always someone's); none without a lead or an active owner. Its id, or null.
 */
async function inboundActivity(
  tx: Executor,
  hook: SignedHook,
  contact: { contactId: string; leadId: string } | null,
  ownerId: string | null,
  from: { channel: 'sms' | 'whatsapp'; e164: string },
  body: string | null,
): Promise<string | null> {
  if (!contact || !ownerId) return null;
  const auth = await actorAuth(tx, hook.orgId, ownerId);
  if (!auth) return null;
  const activity = await insertActivity(actorContext(tx, auth, hook.now), {
    type: from.channel,
    lead_id: contact.leadId,
    contact_id: contact.contactId,
    direction: 'inbound',
    body_text: body,
    phone: from.e164,
    occurred_at: hook.now.toISOString(),
  });
  return activity._id;
}

/** The order of a message's statuses; a callback never moves a message back. */
const STATUS_RANK: Record<string, number> = {
  accepted: 1,
  scheduled: 1,
  queued: 1,
  sending: 2,
  sent: 3,
  delivered: 4,
  undelivered: 4,
  failed: 4,
  read: 5,
};

/** A message's status callback: the status and error code stored unless the row already has a later one. */
async function recordMessageStatus(services: Services, hook: SignedHook): Promise<Response> {
  const sid = one(hook.params, 'MessageSid') ?? '';
  const status = one(hook.params, 'MessageStatus') ?? one(hook.params, 'SmsStatus') ?? '';
  const rank = STATUS_RANK[status];
  if (rank !== undefined) {
    await services.db.withTenant(hook.orgId, async (tx) => {
      const [row] = await tx
        .select()
        .from(messages)
        .where(and(eq(messages.orgId, hook.orgId), eq(messages.sid, sid), eq(messages.direction, 'outbound')))
        .for('update');
      if (!row || (STATUS_RANK[row.status] ?? 0) >= rank) return;
      const errorCode = one(hook.params, 'ErrorCode');
      await tx
        .update(messages)
        .set({
          status,
          ...(errorCode ? { errorCode, errorMessage: `the provider reported error ${errorCode}` } : {}),
          updatedAt: hook.now,
        })
        .where(eq(messages.id, row.id));
    });
  }
  return new Response(null, { status: 204 });
}

/** The status hook's handlers, in order; the voice work adds the calls' (CallSid) before the fallback. */
const STATUS_HANDLERS: StatusHandler[] = [
  {
    name: 'message',
    matches: (params) => one(params, 'MessageSid') !== null && one(params, 'CallSid') === null,
    handle: recordMessageStatus,
  },
];

export const messageHookRoutes: PublicRoute[] = [
  hookRoute(MESSAGING_HOOK_PATH, async (services, hook) => {
    await recordInbound(services, hook);
    return new Response(EMPTY_TWIML, { status: 200, headers: { 'content-type': 'text/xml' } });
  }),
  hookRoute(STATUS_HOOK_PATH, async (services, hook) => {
    const handler = STATUS_HANDLERS.find((h) => h.matches(hook.params));
    // A call's status (CallSid) has no handler yet: answered 204 so Twilio does not retry it.
    return handler ? handler.handle(services, hook) : new Response(null, { status: 204 });
  }),
];
