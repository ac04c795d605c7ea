// The telephony port (core/telephony.ts) on Twilio's public REST API, version 2010-04-01: form-encoded
// requests with Twilio's parameter names, HTTP Basic authentication with the organization's Account
// SID and auth token, JSON answers. The base URL is the operator's TWILIO_API_BASE_URL
// (https://api.twilio.com unless set; a local peer in tests). Failures become TelephonyError with
// Twilio's code and sentence, and whether anything may have been done (core/telephony.ts).
import {
  type ConferenceParticipant,
  type OutboundCall,
  type OutboundMessage,
  type ParticipantChanges,
  type ParticipantRequest,
  type ProviderAccount,
  type ProviderResource,
  type TelephonyCredentials,
  TelephonyError,
  type TelephonyProvider,
} from '../core/telephony.ts';

export interface TwilioProviderOptions {
  /** Origin of the REST API, without a trailing slash. */
  baseUrl: string;
  /** Time limit of one request (ms). */
  timeoutMs: number;
}

type Params = Array<[string, string]>;

function form(params: Params): string {
  const body = new URLSearchParams();
  for (const [name, value] of params) body.append(name, value);
  return body.toString();
}

/** Twilio's error body: `{code, message, more_info, status}`. */
function twilioError(status: number, body: unknown): TelephonyError {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code =
    typeof fields.code === 'number' || typeof fields.code === 'string' ? String(fields.code) : String(status);
  const message =
    typeof fields.message === 'string' && fields.message !== ''
      ? fields.message
      : `The telephony provider answered HTTP ${status}.`;
  // 429: refused before anything was done. Another 4xx: refused for good. A 5xx: it may have acted.
  const outcome = status === 429 ? 'retry' : status >= 500 ? 'unknown' : 'rejected';
  return new TelephonyError(outcome, code, message, status);
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

function resource(body: unknown): ProviderResource {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const sid = text(fields.sid);
  if (sid === '')
    throw new TelephonyError('unknown', 'invalid_response', 'The telephony provider answered without a SID.');
  return { sid, status: text(fields.status) || 'queued' };
}

function participant(body: unknown): ConferenceParticipant {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const callSid = text(fields.call_sid);
  if (callSid === '')
    throw new TelephonyError(
      'unknown',
      'invalid_response',
      'The telephony provider answered without a call SID.',
    );
  return {
    callSid,
    conferenceSid: text(fields.conference_sid),
    muted: fields.muted === true,
    coaching: fields.coaching === true,
    callSidToCoach: text(fields.call_sid_to_coach) || null,
    status: text(fields.status),
  };
}

export class TwilioProvider implements TelephonyProvider {
  readonly name = 'twilio';

  constructor(private readonly options: TwilioProviderOptions) {}

  /** `GET /2010-04-01/Accounts/{AccountSid}.json`: the account's SID, friendly name and status. */
  async verifyAccount(credentials: TelephonyCredentials): Promise<ProviderAccount> {
    const body = await this.request(credentials, 'GET', '.json', []);
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const sid = text(fields.sid);
    if (sid === '')
      throw new TelephonyError(
        'unknown',
        'invalid_response',
        'The telephony provider answered without a SID.',
      );
    return { sid, friendlyName: text(fields.friendly_name), status: text(fields.status) };
  }

  async sendMessage(credentials: TelephonyCredentials, message: OutboundMessage): Promise<ProviderResource> {
    const params: Params = [
      ['To', message.to],
      ['From', message.from],
    ];
    if (message.body !== undefined) params.push(['Body', message.body]);
    if (message.contentSid !== undefined) params.push(['ContentSid', message.contentSid]);
    if (message.contentVariables !== undefined)
      params.push(['ContentVariables', JSON.stringify(message.contentVariables)]);
    for (const url of message.mediaUrls ?? []) params.push(['MediaUrl', url]);
    if (message.statusCallback !== undefined) params.push(['StatusCallback', message.statusCallback]);
    return resource(await this.request(credentials, 'POST', '/Messages.json', params));
  }

  async createCall(credentials: TelephonyCredentials, call: OutboundCall): Promise<ProviderResource> {
    const params: Params = [
      ['To', call.to],
      ['From', call.from],
    ];
    if (call.twiml !== undefined) params.push(['Twiml', call.twiml]);
    if (call.url !== undefined) params.push(['Url', call.url]);
    if (call.statusCallback !== undefined) params.push(['StatusCallback', call.statusCallback]);
    for (const event of call.statusCallbackEvents ?? []) params.push(['StatusCallbackEvent', event]);
    if (call.record) params.push(['Record', 'true']);
    return resource(await this.request(credentials, 'POST', '/Calls.json', params));
  }

  async addParticipant(
    credentials: TelephonyCredentials,
    request: ParticipantRequest,
  ): Promise<ConferenceParticipant> {
    const params: Params = [
      ['From', request.from],
      ['To', request.to],
    ];
    if (request.muted !== undefined) params.push(['Muted', String(request.muted)]);
    if (request.coaching !== undefined) params.push(['Coaching', String(request.coaching)]);
    if (request.callSidToCoach !== undefined) params.push(['CallSidToCoach', request.callSidToCoach]);
    if (request.label !== undefined) params.push(['Label', request.label]);
    if (request.statusCallback !== undefined) params.push(['StatusCallback', request.statusCallback]);
    const path = `/Conferences/${encodeURIComponent(request.conference)}/Participants.json`;
    return participant(await this.request(credentials, 'POST', path, params));
  }

  async updateParticipant(
    credentials: TelephonyCredentials,
    conference: string,
    callSid: string,
    changes: ParticipantChanges,
  ): Promise<ConferenceParticipant> {
    const params: Params = [];
    if (changes.muted !== undefined) params.push(['Muted', String(changes.muted)]);
    if (changes.callSidToCoach !== undefined) params.push(['CallSidToCoach', changes.callSidToCoach ?? '']);
    if (changes.coaching !== undefined) params.push(['Coaching', String(changes.coaching)]);
    return participant(
      await this.request(credentials, 'POST', this.participantPath(conference, callSid), params),
    );
  }

  async removeParticipant(
    credentials: TelephonyCredentials,
    conference: string,
    callSid: string,
  ): Promise<void> {
    await this.request(credentials, 'DELETE', this.participantPath(conference, callSid), []);
  }

  private participantPath(conference: string, callSid: string): string {
    return `/Conferences/${encodeURIComponent(conference)}/Participants/${encodeURIComponent(callSid)}.json`;
  }

  /** One request under the account's path (`.json` alone is the account itself); the answer's JSON, or null for 204. */
  private async request(
    credentials: TelephonyCredentials,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    params: Params,
  ): Promise<unknown> {
    const url = `${this.options.baseUrl}/2010-04-01/Accounts/${encodeURIComponent(credentials.accountSid)}${path}`;
    const authorization = `Basic ${Buffer.from(`${credentials.accountSid}:${credentials.authToken}`).toString('base64')}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          authorization,
          accept: 'application/json',
          ...(method === 'POST' && { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        body: method === 'POST' ? form(params) : undefined,
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      // Nothing tells whether the provider received the request: the caller must not send again blindly.
      const timedOut =
        error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      throw new TelephonyError(
        'unknown',
        timedOut ? 'timeout' : 'unreachable',
        timedOut
          ? `The telephony provider did not answer within ${this.options.timeoutMs} ms.`
          : 'The telephony provider could not be reached.',
      );
    }
    if (res.status === 204) return null;
    const raw = await res.text();
    let body: unknown = null;
    try {
      body = raw === '' ? null : JSON.parse(raw);
    } catch {
      body = null;
    }
    if (!res.ok) throw twilioError(res.status, body);
    return body;
  }
}
