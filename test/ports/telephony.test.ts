// Locks in the telephony port on its Twilio adapter (providers/twilio.ts) against the Twilio-compatible
// peer: Twilio's parameter names and Basic authentication with the organization's account, the SIDs
// it answers, conference participants for listening, whispering and barging, and each failure as a
// TelephonyError saying whether anything may have been sent (refused, try later, or unknown).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { TelephonyError } from '../../core/telephony.ts';
import { TwilioProvider } from '../../providers/twilio.ts';
import { startTwilioPeer, type TwilioPeer } from '../support/twilio-peer.ts';

let peer: TwilioPeer;
let provider: TwilioProvider;
let credentials: { accountSid: string; authToken: string };

beforeAll(async () => {
  peer = await startTwilioPeer();
  provider = new TwilioProvider(
    loadConfig({ TWILIO_API_BASE_URL: `${peer.url}/`, TWILIO_TIMEOUT_MS: '2000' }).telephony,
  );
  credentials = { accountSid: peer.accountSid, authToken: peer.authToken };
});

afterAll(async () => {
  await peer?.close();
});

async function refusal(promise: Promise<unknown>): Promise<TelephonyError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof TelephonyError)) throw new Error(`expected a TelephonyError, got ${String(error)}`);
  return error;
}

describe('the telephony port on Twilio', () => {
  it("defaults to Twilio's own API", () => {
    expect(loadConfig({}).telephony).toEqual({ baseUrl: 'https://api.twilio.com', timeoutMs: 15_000 });
    expect(() => loadConfig({ TWILIO_API_BASE_URL: 'ftp://example.com' })).toThrow(/TWILIO_API_BASE_URL/);
  });

  it("verifies an account: its SID, friendly name and status; a refused login is rejected with Twilio's 401", async () => {
    expect(await provider.verifyAccount(credentials)).toEqual({
      sid: peer.accountSid,
      friendlyName: 'My first Twilio account',
      status: 'active',
    });
    expect(peer.requests.at(-1)).toMatchObject({
      method: 'GET',
      path: `/2010-04-01/Accounts/${peer.accountSid}.json`,
      authenticated: true,
    });
    const refused = await refusal(
      provider.verifyAccount({ accountSid: peer.accountSid, authToken: 'f'.repeat(32) }),
    );
    expect(refused).toMatchObject({ outcome: 'rejected', code: '20003', status: 401 });
  });

  it("sends a message with Twilio's parameter names and the account's Basic login, answering its SID", async () => {
    const sent = await provider.sendMessage(credentials, {
      to: '+15551230001',
      from: '+15551230000',
      body: 'Your quote is ready',
      statusCallback: 'https://crm.example.com/hooks/twilio/messages/status',
    });
    expect(sent.sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(sent.status).toBe('queued');
    expect(peer.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: `/2010-04-01/Accounts/${peer.accountSid}/Messages.json`,
      authenticated: true,
      params: {
        To: '+15551230001',
        From: '+15551230000',
        Body: 'Your quote is ready',
        StatusCallback: 'https://crm.example.com/hooks/twilio/messages/status',
      },
    });
  });

  it('sends a WhatsApp template as ContentSid with its variables as JSON', async () => {
    await provider.sendMessage(credentials, {
      to: 'whatsapp:+15551230001',
      from: 'whatsapp:+15551230000',
      contentSid: `HX${'b'.repeat(32)}`,
      contentVariables: { 1: 'Ada', 2: 'Friday' },
    });
    expect(peer.requests.at(-1)?.params).toEqual({
      To: 'whatsapp:+15551230001',
      From: 'whatsapp:+15551230000',
      ContentSid: `HX${'b'.repeat(32)}`,
      ContentVariables: '{"1":"Ada","2":"Friday"}',
    });
  });

  it("answers a refusal with Twilio's code and sentence, as refused for good", async () => {
    const error = await refusal(
      provider.sendMessage(credentials, { to: '555', from: '+15551230000', body: 'x' }),
    );
    expect(error).toMatchObject({ outcome: 'rejected', code: '21211', status: 400 });
    expect(error.message).toBe("The 'To' number 555 is not a valid phone number.");
    const login = await refusal(
      provider.sendMessage(
        { ...credentials, authToken: 'wrong' },
        { to: '+15551230001', from: '+15551230000', body: 'x' },
      ),
    );
    expect(login).toMatchObject({ outcome: 'rejected', code: '20003', status: 401 });
  });

  it('tells "try later" (429) from "unknown" (a provider error, no answer in time)', async () => {
    peer.failNext('message', { status: 429, code: 20429, message: 'Too Many Requests' });
    const busy = await refusal(
      provider.sendMessage(credentials, { to: '+15551230001', from: '+15551230000', body: 'x' }),
    );
    expect(busy).toMatchObject({ outcome: 'retry', code: '20429' });
    peer.failNext('call', { status: 503, code: 20503, message: 'Service Unavailable' });
    const down = await refusal(
      provider.createCall(credentials, {
        to: '+15551230001',
        from: '+15551230000',
        url: 'https://x.example/t',
      }),
    );
    expect(down).toMatchObject({ outcome: 'unknown', code: '20503' });

    // A host that accepts the request and never answers: the time limit ends it as unknown.
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const slow = new TwilioProvider({
        baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        timeoutMs: 200,
      });
      const late = await refusal(
        slow.sendMessage(credentials, { to: '+15551230001', from: '+15551230000', body: 'x' }),
      );
      expect(late).toMatchObject({ outcome: 'unknown', code: 'timeout' });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
    const nobody = new TwilioProvider({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 2000 });
    const gone = await refusal(
      nobody.sendMessage(credentials, { to: '+15551230001', from: '+15551230000', body: 'x' }),
    );
    expect(gone).toMatchObject({ outcome: 'unknown', code: 'unreachable' });
  });

  it('creates a call with TwiML, its status callback events and recording', async () => {
    const call = await provider.createCall(credentials, {
      to: '+15551230001',
      from: '+15551230000',
      twiml: '<Response><Say>Hello</Say></Response>',
      statusCallback: 'https://crm.example.com/hooks/twilio/calls/status',
      statusCallbackEvents: ['initiated', 'completed'],
      record: true,
    });
    expect(call.sid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(peer.calls.at(-1)).toMatchObject({
      sid: call.sid,
      twiml: '<Response><Say>Hello</Say></Response>',
      statusCallbackEvents: ['initiated', 'completed'],
      record: true,
    });
  });

  it('adds a muted listener, a coach of one participant, turns the coach into a barge and removes it', async () => {
    const agent = await provider.addParticipant(credentials, {
      conference: 'call-77',
      from: '+15551230000',
      to: '+15551230003',
    });
    const listener = await provider.addParticipant(credentials, {
      conference: 'call-77',
      from: '+15551230000',
      to: '+15551230004',
      muted: true,
      label: 'monitor',
    });
    expect(listener).toMatchObject({ muted: true, coaching: false, conferenceSid: agent.conferenceSid });
    const coach = await provider.addParticipant(credentials, {
      conference: agent.conferenceSid,
      from: '+15551230000',
      to: '+15551230005',
      coaching: true,
      callSidToCoach: agent.callSid,
    });
    expect(coach).toMatchObject({ coaching: true, callSidToCoach: agent.callSid });
    const barge = await provider.updateParticipant(credentials, agent.conferenceSid, coach.callSid, {
      coaching: false,
      muted: false,
    });
    expect(barge).toMatchObject({ coaching: false, callSidToCoach: null, muted: false });
    await provider.removeParticipant(credentials, agent.conferenceSid, coach.callSid);
    const again = await refusal(provider.removeParticipant(credentials, agent.conferenceSid, coach.callSid));
    expect(again).toMatchObject({ outcome: 'rejected', code: '20404', status: 404 });
  });
});
