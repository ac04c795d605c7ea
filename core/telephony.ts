// The telephony port: text messages, calls and conference participants through a provider's REST
// API, with the organization's own account (each call names its credentials, decrypted for the call
// and never stored or logged here). The production adapter is providers/twilio.ts, on Twilio's
// public REST API (2010-04-01); TWILIO_API_BASE_URL points it at another host (a test peer,
// test/support/twilio-peer.ts). Another provider is another adapter of this interface.
//
// A failure is a TelephonyError with the provider's code and sentence, and what the caller may do:
// `rejected` (the request was refused: nothing was sent, another attempt with the same input fails
// again), `retry` (refused before anything was done, e.g. too many requests: try later), `unknown`
// (the request may or may not have been acted on: a timeout, a dropped connection or a provider
// error; a sender records "outcome unknown" rather than send twice).

/** The organization's provider account, its secret decrypted for this call. */
export interface TelephonyCredentials {
  accountSid: string;
  authToken: string;
}

export interface OutboundMessage {
  /** E.164 (`+15551230001`) or a channel address (`whatsapp:+15551230001`). */
  to: string;
  from: string;
  body?: string;
  /** An approved template (WhatsApp outside the 24-hour window) and its variables. */
  contentSid?: string;
  contentVariables?: Readonly<Record<string, string>>;
  mediaUrls?: readonly string[];
  /** Where the provider posts the message's statuses. */
  statusCallback?: string;
}

export interface OutboundCall {
  to: string;
  from: string;
  /** TwiML to run when the call is answered, or the URL that answers it. */
  twiml?: string;
  url?: string;
  statusCallback?: string;
  /** Progress events posted to `statusCallback` (initiated, ringing, answered, completed). */
  statusCallbackEvents?: readonly string[];
  record?: boolean;
}

export interface ParticipantRequest {
  /** The conference's SID, or its friendly name (the name a <Conference> noun gave it). */
  conference: string;
  from: string;
  to: string;
  muted?: boolean;
  /** Whisper: heard only by `callSidToCoach`. */
  coaching?: boolean;
  callSidToCoach?: string;
  label?: string;
  statusCallback?: string;
}

export interface ParticipantChanges {
  muted?: boolean;
  coaching?: boolean;
  /** The participant coached; null stops coaching. */
  callSidToCoach?: string | null;
}

/** A provider resource as created: its id (SID) and its first status. */
export interface ProviderResource {
  sid: string;
  status: string;
}

/** The provider account credentials name, as the provider describes it (Twilio's Account resource). */
export interface ProviderAccount {
  sid: string;
  friendlyName: string;
  /** `active`, `suspended` or `closed` on Twilio. */
  status: string;
}

export interface ConferenceParticipant {
  callSid: string;
  conferenceSid: string;
  muted: boolean;
  coaching: boolean;
  callSidToCoach: string | null;
  status: string;
}

export type TelephonyOutcome = 'rejected' | 'retry' | 'unknown';

export class TelephonyError extends Error {
  constructor(
    /** What the caller may do: see the module comment. */
    readonly outcome: TelephonyOutcome,
    /** The provider's error code (Twilio's numeric code as a string), or `timeout` / `unreachable`. */
    readonly code: string,
    message: string,
    /** The provider's HTTP status, when it answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TelephonyError';
  }
}

export interface TelephonyProvider {
  readonly name: string;
  /**
   * Reads the account the credentials name: a login the provider refuses is a `rejected`
   * TelephonyError with its status (401 on Twilio).
   */
  verifyAccount(credentials: TelephonyCredentials): Promise<ProviderAccount>;
  sendMessage(credentials: TelephonyCredentials, message: OutboundMessage): Promise<ProviderResource>;
  createCall(credentials: TelephonyCredentials, call: OutboundCall): Promise<ProviderResource>;
  addParticipant(
    credentials: TelephonyCredentials,
    request: ParticipantRequest,
  ): Promise<ConferenceParticipant>;
  updateParticipant(
    credentials: TelephonyCredentials,
    conference: string,
    callSid: string,
    changes: ParticipantChanges,
  ): Promise<ConferenceParticipant>;
  /** Removes a participant from the conference; a participant already gone is a 404 TelephonyError. */
  removeParticipant(credentials: TelephonyCredentials, conference: string, callSid: string): Promise<void>;
}
