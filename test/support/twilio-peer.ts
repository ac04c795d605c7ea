// A Twilio-compatible peer for the telephony tests, written from Twilio's public REST API and webhook
// documentation (API version 2010-04-01): an HTTP server on a free port that the server's Twilio
// provider reaches through TWILIO_API_BASE_URL instead of https://api.twilio.com.
//
// What it does as Twilio does:
// - HTTP Basic authentication with the Account SID (or an API key SID) and its secret; a wrong one is
//   401 with Twilio's error body `{code: 20003, message, more_info, status}`; another account's path is 404.
// - Form-encoded requests with Twilio's parameter names (`To`, `From`, `Body`, `MediaUrl`,
//   `ContentSid`, `ContentVariables`, `StatusCallback`, `Url`, `Twiml`, `Muted`, `Coaching`,
//   `CallSidToCoach`, ...); JSON answers with snake_case fields, RFC 2822 dates and 34-character SIDs
//   (`SM`, `CA`, `CF` + 32 hex), 201 on create, 204 on delete, Twilio's error codes for what it checks.
// - The account resource `/Accounts/{AccountSid}.json` (sid, friendly_name, status), which a client
//   reads to check its credentials.
// - Messages.json, Calls.json, Conferences/{sid or friendly name}/Participants(.json, /{CallSid}.json).
// - Status callbacks POSTed form-encoded to the `StatusCallback` a request named, with a real
//   `X-Twilio-Signature`: HMAC-SHA1 keyed by the auth token over the full URL followed by every POST
//   parameter's name and value, sorted by name, base64. A test may send them duplicated or out of
//   order (`sendStatuses`), and play inbound traffic (`sendInbound`) to the server's hooks.
// - WhatsApp's customer-care window: a free-form WhatsApp message to someone who has not written in
//   the last 24 hours is accepted (201 queued) and then fails with error 63016, as Twilio reports it;
//   a template (`ContentSid`) is delivered whatever the window.
//
// Every request is kept in `requests` (method, path, parameters, whether it authenticated), and every
// created message, call and participant in its own list, for the tests to assert on.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TWILIO_API_VERSION = '2010-04-01';

export type FormParams = Record<string, string | string[]>;

export interface PeerRequest {
  method: string;
  path: string;
  params: FormParams;
  authenticated: boolean;
}

export interface PeerMessage {
  sid: string;
  to: string;
  from: string;
  body: string | null;
  contentSid: string | null;
  contentVariables: string | null;
  mediaUrls: string[];
  statusCallback: string | null;
  status: string;
  errorCode: number | null;
  channel: 'sms' | 'whatsapp';
  dateCreated: Date;
}

export interface PeerCall {
  sid: string;
  to: string;
  from: string;
  url: string | null;
  twiml: string | null;
  statusCallback: string | null;
  statusCallbackEvents: string[];
  record: boolean;
  status: string;
  direction: 'outbound-api' | 'inbound';
  dateCreated: Date;
}

export interface PeerParticipant {
  callSid: string;
  conferenceSid: string;
  conferenceName: string;
  from: string;
  to: string;
  muted: boolean;
  hold: boolean;
  coaching: boolean;
  callSidToCoach: string | null;
  label: string | null;
  statusCallback: string | null;
  status: string;
  removed: boolean;
}

/** How a status callback reaches the server: a real fetch by default, or the app's own `request`. */
export type Deliver = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string },
) => Promise<Response>;

export interface TwilioPeerOptions {
  /** Defaults to a random `AC` + 32 hex. */
  accountSid?: string;
  /** Defaults to 32 random hex characters. */
  authToken?: string;
  /** The account's `friendly_name`; defaults to `My first Twilio account`. */
  friendlyName?: string;
  /** API keys (`SK...` -> secret) accepted for Basic authentication besides the account's own token. */
  apiKeys?: Record<string, string>;
  /** Where callbacks and inbound traffic go; `fetch` when not given. */
  deliver?: Deliver;
}

export interface StatusOptions {
  /** Parameters added to each callback (a completed call's `CallDuration`, `RecordingUrl`...). */
  extra?: FormParams;
  /** Where to send them when the resource named no `StatusCallback` (an inbound call: the number's own). */
  url?: string;
}

export interface TwilioError {
  status: number;
  code: number;
  message: string;
}

export interface TwilioPeer {
  /** `http://127.0.0.1:<port>`: TWILIO_API_BASE_URL for the server under test. */
  url: string;
  accountSid: string;
  authToken: string;
  requests: PeerRequest[];
  messages: PeerMessage[];
  calls: PeerCall[];
  participants: PeerParticipant[];
  /** The next create request of this kind is answered with this error instead (once). */
  failNext(kind: 'message' | 'call' | 'participant', error: TwilioError): void;
  /** `X-Twilio-Signature` for a POST of `params` to `url`, signed with the account's auth token. */
  sign(url: string, params: FormParams, authToken?: string): string;
  /**
   * POSTs the given statuses of a message or call to its `StatusCallback`, signed, in the order given
   * (a test reverses or repeats them on purpose); answers each Response.
   */
  sendStatuses(sid: string, statuses: string[], options?: StatusOptions): Promise<Response[]>;
  /**
   * POSTs inbound traffic (an incoming message or call) to `url`, signed (or with `signature` as
   * given: a forged or missing one), as Twilio calls a number's webhook. An incoming WhatsApp message
   * opens that sender's 24-hour window.
   */
  sendInbound(url: string, params: FormParams, options?: { signature?: string | null }): Promise<Response>;
  /** Inbound message parameters as Twilio sends them (MessageSid, AccountSid, From, To, Body, NumMedia...). */
  inboundMessage(from: string, to: string, body: string): FormParams;
  /** Inbound call parameters as Twilio sends them to a number's voice URL (CallSid, CallStatus ringing...). */
  inboundCall(from: string, to: string): FormParams;
  close(): Promise<void>;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
export const newSid = (prefix: string) => `${prefix}${hex(16)}`;

/** RFC 2822 in GMT, as Twilio's `date_created`: `Tue, 27 Nov 2018 16:14:39 +0000`. */
export function rfc2822(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}

/**
 * Twilio's request signature: the full URL, then each POST parameter's name and value appended in
 * name order (a repeated name contributes each of its values, in sorted order), HMAC-SHA1 with the
 * auth token, base64.
 */
export function twilioSignature(authToken: string, url: string, params: FormParams): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name];
    const values = Array.isArray(value) ? [...value].sort() : [value ?? ''];
    for (const v of values) data += name + v;
  }
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

/** A form body from parameters; a repeated name (MediaUrl) is sent once per value. */
export function formBody(params: FormParams): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
  }
  return form.toString();
}

const E164 = /^\+[1-9]\d{6,14}$/;

/** A phone number, or the channel form `whatsapp:+E164`. */
function addressOf(value: string): { channel: 'sms' | 'whatsapp'; number: string } | null {
  const whatsapp = value.startsWith('whatsapp:');
  const number = whatsapp ? value.slice('whatsapp:'.length) : value;
  return E164.test(number) ? { channel: whatsapp ? 'whatsapp' : 'sms', number } : null;
}

function parseForm(body: string): FormParams {
  const params: FormParams = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const known = params[name];
    if (known === undefined) params[name] = value;
    else params[name] = Array.isArray(known) ? [...known, value] : [known, value];
  }
  return params;
}

const one = (params: FormParams, name: string): string | undefined => {
  const value = params[name];
  return Array.isArray(value) ? value[0] : value;
};
const many = (params: FormParams, name: string): string[] => {
  const value = params[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
};
const flag = (params: FormParams, name: string): boolean | undefined => {
  const value = one(params, name);
  return value === undefined ? undefined : value.toLowerCase() === 'true';
};

class Refusal extends Error {
  constructor(readonly error: TwilioError) {
    super(error.message);
  }
}

const refuse = (status: number, code: number, message: string): never => {
  throw new Refusal({ status, code, message });
};

/** WhatsApp's customer-care window: 24 hours from the customer's last message. */
const WHATSAPP_WINDOW_MS = 24 * 3600 * 1000;

export async function startTwilioPeer(options: TwilioPeerOptions = {}): Promise<TwilioPeer> {
  const accountSid = options.accountSid ?? newSid('AC');
  const authToken = options.authToken ?? hex(16);
  const apiKeys = options.apiKeys ?? {};
  const deliver: Deliver = options.deliver ?? ((url, init) => fetch(url, init));
  const requests: PeerRequest[] = [];
  const messages: PeerMessage[] = [];
  const calls: PeerCall[] = [];
  const participants: PeerParticipant[] = [];
  const conferences = new Map<string, { sid: string; name: string }>();
  const failures = new Map<'message' | 'call' | 'participant', TwilioError>();
  // The last inbound WhatsApp message from each customer number, for the 24-hour window.
  const lastInboundWhatsapp = new Map<string, number>();
  let base = '';

  const accountPath = `/${TWILIO_API_VERSION}/Accounts/${accountSid}`;
  const friendlyName = options.friendlyName ?? 'My first Twilio account';
  const accountCreated = new Date();

  function accountJson() {
    return {
      sid: accountSid,
      owner_account_sid: accountSid,
      friendly_name: friendlyName,
      status: 'active',
      type: 'Full',
      auth_token: authToken,
      date_created: rfc2822(accountCreated),
      date_updated: rfc2822(accountCreated),
      uri: `${accountPath}.json`,
      subresource_uris: {
        calls: `${accountPath}/Calls.json`,
        messages: `${accountPath}/Messages.json`,
        conferences: `${accountPath}/Conferences.json`,
      },
    };
  }

  function authenticated(req: IncomingMessage): boolean {
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Basic ')) return false;
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const user = decoded.slice(0, colon);
    const secret = decoded.slice(colon + 1);
    if (user === accountSid) return secret === authToken;
    return apiKeys[user] !== undefined && apiKeys[user] === secret;
  }

  function failure(kind: 'message' | 'call' | 'participant'): void {
    const error = failures.get(kind);
    if (error) {
      failures.delete(kind);
      throw new Refusal(error);
    }
  }

  function messageJson(m: PeerMessage) {
    return {
      sid: m.sid,
      account_sid: accountSid,
      messaging_service_sid: null,
      to: m.to,
      from: m.from,
      body: m.body,
      status: m.status,
      num_segments: m.body ? String(Math.max(1, Math.ceil(m.body.length / 160))) : '1',
      num_media: String(m.mediaUrls.length),
      direction: 'outbound-api',
      api_version: TWILIO_API_VERSION,
      price: null,
      price_unit: 'USD',
      error_code: m.errorCode,
      error_message: null,
      date_created: rfc2822(m.dateCreated),
      date_updated: rfc2822(m.dateCreated),
      date_sent: null,
      uri: `${accountPath}/Messages/${m.sid}.json`,
      subresource_uris: { media: `${accountPath}/Messages/${m.sid}/Media.json` },
    };
  }

  function callJson(c: PeerCall) {
    return {
      sid: c.sid,
      account_sid: accountSid,
      parent_call_sid: null,
      to: c.to,
      to_formatted: c.to,
      from: c.from,
      from_formatted: c.from,
      status: c.status,
      start_time: null,
      end_time: null,
      duration: null,
      price: null,
      price_unit: 'USD',
      direction: c.direction,
      answered_by: null,
      api_version: TWILIO_API_VERSION,
      forwarded_from: null,
      caller_name: null,
      date_created: rfc2822(c.dateCreated),
      date_updated: rfc2822(c.dateCreated),
      uri: `${accountPath}/Calls/${c.sid}.json`,
      subresource_uris: { recordings: `${accountPath}/Calls/${c.sid}/Recordings.json` },
    };
  }

  function participantJson(p: PeerParticipant) {
    return {
      account_sid: accountSid,
      call_sid: p.callSid,
      conference_sid: p.conferenceSid,
      label: p.label,
      call_sid_to_coach: p.callSidToCoach,
      coaching: p.coaching,
      muted: p.muted,
      hold: p.hold,
      start_conference_on_enter: true,
      end_conference_on_exit: false,
      status: p.status,
      queue_time: null,
      date_created: rfc2822(new Date()),
      date_updated: rfc2822(new Date()),
      uri: `${accountPath}/Conferences/${p.conferenceSid}/Participants/${p.callSid}.json`,
    };
  }

  function createMessage(params: FormParams): PeerMessage {
    failure('message');
    const to = one(params, 'To');
    if (!to) refuse(400, 21604, "A 'To' phone number is required.");
    const toAddress = addressOf(to ?? '');
    if (!toAddress) refuse(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    const from = one(params, 'From');
    if (!from && !one(params, 'MessagingServiceSid'))
      refuse(400, 21603, "A 'From' phone number is required.");
    const body = one(params, 'Body') ?? null;
    const contentSid = one(params, 'ContentSid') ?? null;
    const mediaUrls = many(params, 'MediaUrl');
    if (!body && !contentSid && mediaUrls.length === 0) refuse(400, 21602, 'Message body is required.');
    if (body !== null && body.length > 1600)
      refuse(400, 21617, 'The concatenated message body exceeds the 1600 character limit.');
    if (contentSid !== null && !/^HX[0-9a-f]{32}$/.test(contentSid))
      refuse(400, 21656, 'The ContentSid is Invalid.');
    const contentVariables = one(params, 'ContentVariables') ?? null;
    if (contentVariables !== null) {
      try {
        const parsed: unknown = JSON.parse(contentVariables);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new Error('not an object');
      } catch {
        refuse(400, 21656, 'The ContentVariables Parameter is invalid.');
      }
    }
    const channel = toAddress?.channel ?? 'sms';
    const message: PeerMessage = {
      sid: newSid('SM'),
      to: to ?? '',
      from: from ?? '',
      body,
      contentSid,
      contentVariables,
      mediaUrls,
      statusCallback: one(params, 'StatusCallback') ?? null,
      status: 'queued',
      errorCode: null,
      channel,
      dateCreated: new Date(),
    };
    // Twilio accepts a free-form WhatsApp message outside the window and fails it afterwards (63016).
    if (channel === 'whatsapp' && contentSid === null) {
      const last = lastInboundWhatsapp.get(toAddress?.number ?? '');
      if (last === undefined || Date.now() - last > WHATSAPP_WINDOW_MS) message.errorCode = 63016;
    }
    messages.push(message);
    return message;
  }

  function createCall(params: FormParams): PeerCall {
    failure('call');
    const to = one(params, 'To');
    if (!to) refuse(400, 21201, "No 'To' number is specified");
    if (!addressOf(to ?? '') && !(to ?? '').startsWith('client:'))
      refuse(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    const from = one(params, 'From');
    if (!from) refuse(400, 21213, "No 'From' number is specified");
    const url = one(params, 'Url') ?? null;
    const twiml = one(params, 'Twiml') ?? null;
    if (!url && !twiml && !one(params, 'ApplicationSid')) refuse(400, 21205, 'Url parameter is required.');
    const call: PeerCall = {
      sid: newSid('CA'),
      to: to ?? '',
      from: from ?? '',
      url,
      twiml,
      statusCallback: one(params, 'StatusCallback') ?? null,
      statusCallbackEvents: many(params, 'StatusCallbackEvent').flatMap((e) => e.split(' ')),
      record: flag(params, 'Record') === true,
      status: 'queued',
      direction: 'outbound-api',
      dateCreated: new Date(),
    };
    calls.push(call);
    // TwiML that dials into a conference makes the call its participant, as once Twilio's call is
    // answered (the callee of this peer always answers): a coach may then name it in CallSidToCoach.
    const joined = twiml?.match(/<Conference[^>]*>([^<]+)<\/Conference>/)?.[1];
    if (joined) {
      const conference = conferenceOf(joined);
      participants.push({
        callSid: call.sid,
        conferenceSid: conference.sid,
        conferenceName: conference.name,
        from: call.from,
        to: call.to,
        muted: false,
        hold: false,
        coaching: false,
        callSidToCoach: null,
        label: null,
        statusCallback: call.statusCallback,
        status: 'connected',
        removed: false,
      });
    }
    return call;
  }

  function conferenceOf(sidOrName: string): { sid: string; name: string } {
    const known = conferences.get(sidOrName) ?? [...conferences.values()].find((c) => c.name === sidOrName);
    if (known) return known;
    // A SID names an existing conference only; a friendly name creates it, as a <Conference> noun would.
    if (/^CF[0-9a-f]{32}$/.test(sidOrName))
      refuse(404, 20404, `The requested resource ${accountPath}/Conferences/${sidOrName} was not found`);
    const conference = { sid: newSid('CF'), name: sidOrName };
    conferences.set(conference.sid, conference);
    return conference;
  }

  function addParticipant(conference: string, params: FormParams): PeerParticipant {
    failure('participant');
    const { sid, name } = conferenceOf(conference);
    const from = one(params, 'From');
    const to = one(params, 'To');
    if (!from) refuse(400, 21213, "No 'From' number is specified");
    if (!to) refuse(400, 21201, "No 'To' number is specified");
    const callSidToCoach = one(params, 'CallSidToCoach') ?? null;
    const coaching = flag(params, 'Coaching') ?? callSidToCoach !== null;
    if (coaching && callSidToCoach === null)
      refuse(400, 20001, 'CallSidToCoach is required when Coaching is true.');
    if (
      callSidToCoach !== null &&
      !participants.some((p) => p.callSid === callSidToCoach && p.conferenceSid === sid && !p.removed)
    )
      refuse(400, 20001, `CallSidToCoach ${callSidToCoach} is not a participant of the conference.`);
    const participant: PeerParticipant = {
      callSid: newSid('CA'),
      conferenceSid: sid,
      conferenceName: name,
      from: from ?? '',
      to: to ?? '',
      muted: flag(params, 'Muted') ?? false,
      hold: false,
      coaching,
      callSidToCoach,
      label: one(params, 'Label') ?? null,
      statusCallback: one(params, 'StatusCallback') ?? null,
      status: 'queued',
      removed: false,
    };
    participants.push(participant);
    return participant;
  }

  function participantOf(conference: string, callSid: string): PeerParticipant {
    const { sid } = conferenceOf(conference);
    const participant = participants.find(
      (p) => p.conferenceSid === sid && p.callSid === callSid && !p.removed,
    );
    if (!participant)
      return refuse(
        404,
        20404,
        `The requested resource ${accountPath}/Conferences/${sid}/Participants/${callSid}.json was not found`,
      );
    return participant;
  }

  function updateParticipant(participant: PeerParticipant, params: FormParams): void {
    const muted = flag(params, 'Muted');
    if (muted !== undefined) participant.muted = muted;
    const hold = flag(params, 'Hold');
    if (hold !== undefined) participant.hold = hold;
    const callSidToCoach = one(params, 'CallSidToCoach');
    if (callSidToCoach !== undefined) participant.callSidToCoach = callSidToCoach || null;
    const coaching = flag(params, 'Coaching');
    if (coaching !== undefined) {
      if (coaching && participant.callSidToCoach === null)
        refuse(400, 20001, 'CallSidToCoach is required when Coaching is true.');
      participant.coaching = coaching;
      if (!coaching) participant.callSidToCoach = null;
    }
  }

  type Answer = { status: number; json?: unknown };

  function route(method: string, path: string, params: FormParams): Answer {
    if (method === 'GET' && path === `${accountPath}.json`) return { status: 200, json: accountJson() };
    if (method === 'POST' && path === `${accountPath}/Messages.json`)
      return { status: 201, json: messageJson(createMessage(params)) };
    if (method === 'POST' && path === `${accountPath}/Calls.json`)
      return { status: 201, json: callJson(createCall(params)) };
    const messageSid = path.match(new RegExp(`^${accountPath}/Messages/(SM[0-9a-f]{32})\\.json$`))?.[1];
    if (method === 'GET' && messageSid) {
      const message = messages.find((m) => m.sid === messageSid);
      if (message) return { status: 200, json: messageJson(message) };
    }
    const callSid = path.match(new RegExp(`^${accountPath}/Calls/(CA[0-9a-f]{32})\\.json$`))?.[1];
    if (callSid) {
      const call = calls.find((c) => c.sid === callSid);
      if (call && method === 'GET') return { status: 200, json: callJson(call) };
      if (call && method === 'POST') {
        const status = one(params, 'Status');
        if (status === 'completed' || status === 'canceled') call.status = status;
        return { status: 200, json: callJson(call) };
      }
    }
    const list = path.match(new RegExp(`^${accountPath}/Conferences/([^/]+)/Participants\\.json$`));
    if (list?.[1]) {
      const conference = decodeURIComponent(list[1]);
      if (method === 'POST')
        return { status: 201, json: participantJson(addParticipant(conference, params)) };
      if (method === 'GET') {
        const { sid } = conferenceOf(conference);
        return {
          status: 200,
          json: {
            participants: participants
              .filter((p) => p.conferenceSid === sid && !p.removed)
              .map(participantJson),
          },
        };
      }
    }
    const item = path.match(new RegExp(`^${accountPath}/Conferences/([^/]+)/Participants/([^/]+)\\.json$`));
    if (item?.[1] && item[2]) {
      const participant = participantOf(decodeURIComponent(item[1]), decodeURIComponent(item[2]));
      if (method === 'GET') return { status: 200, json: participantJson(participant) };
      if (method === 'POST') {
        updateParticipant(participant, params);
        return { status: 200, json: participantJson(participant) };
      }
      if (method === 'DELETE') {
        participant.removed = true;
        participant.status = 'complete';
        return { status: 204 };
      }
    }
    return refuse(404, 20404, `The requested resource ${path} was not found`);
  }

  function answer(res: ServerResponse, status: number, json?: unknown): void {
    if (json === undefined) {
      res.writeHead(status).end();
      return;
    }
    const body = JSON.stringify(json);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://peer');
      const method = req.method ?? 'GET';
      const body = Buffer.concat(chunks).toString('utf8');
      const type = req.headers['content-type'] ?? '';
      const params =
        method === 'GET' || method === 'DELETE'
          ? parseForm(url.search.slice(1))
          : type.startsWith('application/x-www-form-urlencoded')
            ? parseForm(body)
            : {};
      const ok = authenticated(req);
      requests.push({ method, path: url.pathname, params, authenticated: ok });
      const error = (e: TwilioError) =>
        answer(res, e.status, {
          code: e.code,
          message: e.message,
          more_info: `https://www.twilio.com/docs/errors/${e.code}`,
          status: e.status,
        });
      if (!ok) return error({ status: 401, code: 20003, message: 'Authenticate' });
      if (!url.pathname.startsWith(`${accountPath}/`) && url.pathname !== `${accountPath}.json`)
        return error({
          status: 404,
          code: 20404,
          message: `The requested resource ${url.pathname} was not found`,
        });
      if (method === 'POST' && body !== '' && !type.startsWith('application/x-www-form-urlencoded'))
        return error({
          status: 400,
          code: 20001,
          message: 'Requests must be application/x-www-form-urlencoded.',
        });
      try {
        const { status, json } = route(method, url.pathname, params);
        answer(res, status, json);
      } catch (e) {
        if (e instanceof Refusal) return error(e.error);
        answer(res, 500, { code: 20500, message: 'Internal Server Error', status: 500 });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  function sign(url: string, params: FormParams, token = authToken): string {
    return twilioSignature(token, url, params);
  }

  async function post(url: string, params: FormParams, signature: string | null): Promise<Response> {
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      'user-agent': 'TwilioProxy/1.1',
      'i-twilio-idempotency-token': hex(16),
    };
    if (signature !== null) headers['x-twilio-signature'] = signature;
    return deliver(url, { method: 'POST', headers, body: formBody(params) });
  }

  function statusParams(
    sid: string,
    status: string,
    sequence: number,
    to: string | undefined,
  ): { url: string; params: FormParams } {
    const message = messages.find((m) => m.sid === sid);
    if (message) {
      const url = to ?? message.statusCallback;
      if (!url) throw new Error(`message ${sid} named no StatusCallback`);
      message.status = status;
      const params: FormParams = {
        MessageSid: sid,
        SmsSid: sid,
        SmsStatus: status,
        MessageStatus: status,
        AccountSid: accountSid,
        From: message.from,
        To: message.to,
        ApiVersion: TWILIO_API_VERSION,
      };
      if ((status === 'failed' || status === 'undelivered') && message.errorCode !== null)
        params.ErrorCode = String(message.errorCode);
      return { url, params };
    }
    const call = calls.find((c) => c.sid === sid);
    if (call) {
      const url = to ?? call.statusCallback;
      if (!url) throw new Error(`call ${sid} named no StatusCallback`);
      call.status = status;
      return {
        url,
        params: {
          CallSid: sid,
          AccountSid: accountSid,
          From: call.from,
          To: call.to,
          Direction: call.direction,
          CallStatus: status,
          ApiVersion: TWILIO_API_VERSION,
          CallbackSource: 'call-progress-events',
          SequenceNumber: String(sequence),
          Timestamp: rfc2822(new Date()),
        },
      };
    }
    throw new Error(`no message or call ${sid} on the peer`);
  }

  return {
    url: base,
    accountSid,
    authToken,
    requests,
    messages,
    calls,
    participants,
    failNext(kind, error) {
      failures.set(kind, error);
    },
    sign,
    async sendStatuses(sid, statuses, opts = {}) {
      const answers: Response[] = [];
      let sequence = 0;
      for (const status of statuses) {
        const { url, params } = statusParams(sid, status, sequence++, opts.url);
        const all = { ...params, ...opts.extra };
        answers.push(await post(url, all, sign(url, all)));
      }
      return answers;
    },
    async sendInbound(url, params, opts = {}) {
      const from = one(params, 'From') ?? '';
      if (from.startsWith('whatsapp:') && one(params, 'MessageSid'))
        lastInboundWhatsapp.set(from.slice('whatsapp:'.length), Date.now());
      const signature = opts.signature === undefined ? sign(url, params) : opts.signature;
      return post(url, params, signature);
    },
    inboundMessage(from, to, body) {
      const sid = newSid('SM');
      return {
        MessageSid: sid,
        SmsSid: sid,
        SmsMessageSid: sid,
        AccountSid: accountSid,
        From: from,
        To: to,
        Body: body,
        NumMedia: '0',
        NumSegments: '1',
        SmsStatus: 'received',
        ApiVersion: TWILIO_API_VERSION,
      };
    },
    inboundCall(from, to) {
      const call: PeerCall = {
        sid: newSid('CA'),
        to,
        from,
        url: null,
        twiml: null,
        statusCallback: null,
        statusCallbackEvents: [],
        record: false,
        status: 'ringing',
        direction: 'inbound',
        dateCreated: new Date(),
      };
      calls.push(call);
      return {
        CallSid: call.sid,
        AccountSid: accountSid,
        From: from,
        To: to,
        CallStatus: 'ringing',
        Direction: 'inbound',
        ApiVersion: TWILIO_API_VERSION,
        Caller: from,
        Called: to,
      };
    },
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
