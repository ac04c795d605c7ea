// The provider's call hooks, public routes without a user token (mounted under the per-IP public
// limit, rest/public-pages.ts):
// - POST /hooks/twilio/voice: an incoming call. The Account SID names the organization; the request
//   must carry that account's signature over hookUrl + the form parameters (else 403, nothing
//   stored); the number called must be a live number of that organization (else TwiML <Reject/>).
//   The call is recorded once per call SID and answered with TwiML: the number's active voice agent
//   over ConversationRelay; else, with a forward_to number, the caller waits in conference
//   `call-<CallSid>` while the owner is dialled into it through the provider (that leg's SID kept:
//   call monitoring joins that conference); else a sentence and a hang-up.
// - POST /hooks/twilio/voice/status: a call's status callback, signed the same way, applied by rank
//   (store.ts applyCallStatus). The messages area owns /hooks/twilio/status for message statuses
//   (docs/decisions.md "Call statuses on their own hook URL").
import type { PublicRequest, PublicRoute } from '../../core/area.ts';
import { AppError, toAppError } from '../../core/errors.ts';
import type { Services } from '../../core/services.ts';
import { TelephonyError } from '../../core/telephony.ts';
import { liveContactWithPhone } from '../contacts/lookups.ts';
import { numberByE164 } from '../phone-numbers/lookups.ts';
import { organizationOfAccount } from '../telephony/lookups.ts';
import { type HookParams, hookUrl, isValidTwilioSignature } from '../telephony/signature.ts';
import { activeVoiceAgent, type VoiceAgentFacts } from '../voice-agents/lookups.ts';
import { type AnsweredBy, applyCallStatus, recordInboundCall, recordOwnerLeg } from './store.ts';

export const VOICE_HOOK_PATH = '/hooks/twilio/voice';
export const VOICE_STATUS_HOOK_PATH = '/hooks/twilio/voice/status';

const CALL_SID = /^CA[0-9a-f]{32}$/;
const ACCOUNT_SID = /^AC[0-9a-f]{32}$/;
const MAX_ADDRESS = 64;

/** Text or an attribute value safe inside XML. */
function xmlEscape(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>';

function twiml(body: string): Response {
  return new Response(`${XML_HEAD}<Response>${body}</Response>`, {
    status: 200,
    headers: { 'content-type': 'text/xml; charset=utf-8', 'cache-control': 'no-store' },
  });
}

function plain(status: number, text: string): Response {
  return new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}

const REJECT = '<Reject/>';
const NOBODY = '<Say>Sorry, nobody can take your call right now. Please try again later.</Say><Hangup/>';

/** The conference a forwarded call waits in: monitoring joins it by this name. */
function conferenceNameOf(callSid: string): string {
  return `call-${callSid}`;
}

function relayTwiml(services: Services, agent: VoiceAgentFacts): string {
  const host = new URL(services.config.publicBaseUrl).host;
  const url = `wss://${host}/voice/relay/${agent.id}`;
  return (
    `<Connect><ConversationRelay url="${xmlEscape(url)}" welcomeGreeting="${xmlEscape(agent.greeting)}"` +
    ` language="${xmlEscape(agent.language)}" voice="${xmlEscape(agent.voice)}"/></Connect>`
  );
}

function conferenceTwiml(name: string, caller: boolean): string {
  const flags = caller ? ' startConferenceOnEnter="true" endConferenceOnExit="true"' : '';
  return `<Dial><Conference${flags}>${xmlEscape(name)}</Conference></Dial>`;
}

/** The form's string parameters (a repeated name keeps each value). */
function hookParams(body: Record<string, unknown>): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string') params[name] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) params[name] = value;
  }
  return params;
}

const one = (params: HookParams, name: string): string | undefined => {
  const value = params[name];
  return typeof value === 'string' ? value : value?.[0];
};

/**
 * The organization of a signed hook request and its parameters, or the 403 response: an unknown
 * or malformed Account SID and a bad or missing signature are the same refusal.
 */
async function authenticate(
  request: PublicRequest,
  services: Services,
  path: string,
): Promise<{ orgId: string; accountSid: string; authToken: string; params: HookParams } | Response> {
  const params = hookParams(await request.body({ forms: true }));
  const accountSid = one(params, 'AccountSid') ?? '';
  const account = ACCOUNT_SID.test(accountSid)
    ? await organizationOfAccount(services.db.system, services, accountSid)
    : null;
  const signature = request.raw.headers.get('x-twilio-signature');
  if (!account || !isValidTwilioSignature(account.authToken, hookUrl(services, path), params, signature))
    return plain(403, 'Forbidden');
  return { orgId: account.orgId, accountSid, authToken: account.authToken, params };
}

/** A parameter the provider always sends, or the 400 naming it. */
function required(params: HookParams, name: string, pattern?: RegExp): string {
  const value = one(params, name)?.trim() ?? '';
  if (value === '' || value.length > MAX_ADDRESS || (pattern && !pattern.test(value)))
    throw new AppError('validation_failed', {
      details: [{ field: name, message: `${name} is missing or malformed`, code: 'invalid_value' }],
    });
  return value;
}

function failed(err: unknown, request: PublicRequest, services: Services, what: string): Response {
  const error = toAppError(err);
  if (error.code === 'internal')
    services.logger.error({ err, requestId: request.requestId }, `${what} failed`);
  return new Response(JSON.stringify(error.body), {
    status: error.status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}

async function incomingCall(request: PublicRequest, services: Services): Promise<Response> {
  const auth = await authenticate(request, services, VOICE_HOOK_PATH);
  if (auth instanceof Response) return auth;
  const { orgId, params } = auth;
  const callSid = required(params, 'CallSid', CALL_SID);
  const from = required(params, 'From');
  const to = required(params, 'To');
  const number = await numberByE164(services.db.system, to);
  if (!number || number.orgId !== orgId || !number.capabilities.voice) return twiml(REJECT);
  const now = new Date();
  const decision = await services.db.withTenant(orgId, async (tx) => {
    const agent =
      number.defaultVoiceAgentId === null
        ? null
        : await activeVoiceAgent(tx, orgId, number.defaultVoiceAgentId);
    const answeredBy: AnsweredBy = agent ? 'agent' : number.forwardTo ? 'forward' : 'nobody';
    const { row, created } = await recordInboundCall(tx, {
      orgId,
      callSid,
      from,
      to,
      status: one(params, 'CallStatus') ?? 'ringing',
      phoneNumberId: number.id,
      leadId: (await liveContactWithPhone(tx, orgId, from))?.leadId ?? null,
      agentId: agent?.id ?? null,
      answeredBy,
      conferenceName: answeredBy === 'forward' ? conferenceNameOf(callSid) : null,
      now,
    });
    return { row, created, agent };
  });
  const { row, created, agent } = decision;
  if (row.answeredBy === 'agent' && agent) return twiml(relayTwiml(services, agent));
  if (row.answeredBy === 'forward' && row.conferenceName !== null && number.forwardTo) {
    // A repeated hook for the same call answers the same conference and dials nobody twice.
    if (created) {
      const credentials = { accountSid: auth.accountSid, authToken: auth.authToken };
      let leg: { sid: string } | { error: string };
      try {
        const created = await services.telephony.createCall(credentials, {
          from: number.number,
          to: number.forwardTo,
          twiml: `${XML_HEAD}<Response>${conferenceTwiml(row.conferenceName, false)}</Response>`,
          statusCallback: hookUrl(services, VOICE_STATUS_HOOK_PATH),
        });
        leg = { sid: created.sid };
      } catch (err) {
        if (!(err instanceof TelephonyError)) throw err;
        services.logger.warn(
          { err, callSid, orgId, requestId: request.requestId },
          "the owner's leg of a forwarded call could not be created",
        );
        leg = { error: `${err.code}: ${err.message}`.slice(0, 500) };
      }
      await services.db.withTenant(orgId, (tx) => recordOwnerLeg(tx, orgId, row.id, leg));
    }
    return twiml(conferenceTwiml(row.conferenceName, true));
  }
  return twiml(NOBODY);
}

async function callStatus(request: PublicRequest, services: Services): Promise<Response> {
  const auth = await authenticate(request, services, VOICE_STATUS_HOOK_PATH);
  if (auth instanceof Response) return auth;
  const { orgId, params } = auth;
  const callSid = required(params, 'CallSid', CALL_SID);
  const status = required(params, 'CallStatus', /^[a-z-]+$/);
  const duration = one(params, 'CallDuration');
  const recordingUrl = one(params, 'RecordingUrl');
  await services.db.withTenant(orgId, (tx) =>
    applyCallStatus(
      tx,
      orgId,
      {
        callSid,
        status,
        durationSeconds: duration && /^\d{1,9}$/.test(duration) ? Number(duration) : null,
        recordingUrl: recordingUrl && recordingUrl.length <= 2000 ? recordingUrl : null,
        now: new Date(),
      },
      services.logger,
    ),
  );
  // Twilio reads nothing from a status callback's answer but its success.
  return new Response(null, { status: 204 });
}

export const callHookRoutes: PublicRoute[] = [
  {
    method: 'POST',
    path: VOICE_HOOK_PATH,
    async handle(request, services) {
      try {
        return await incomingCall(request, services);
      } catch (err) {
        return failed(err, request, services, 'voice hook');
      }
    },
  },
  {
    method: 'POST',
    path: VOICE_STATUS_HOOK_PATH,
    async handle(request, services) {
      try {
        return await callStatus(request, services);
      } catch (err) {
        return failed(err, request, services, 'call status hook');
      }
    },
  },
];
