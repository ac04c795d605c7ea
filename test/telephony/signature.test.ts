// Locks in the provider hooks' signature check (tools/telephony/signature.ts) on the `twilio` package's validator against the Twilio peer's signatures: a peer-signed callback validates; a changed parameter, URL or token, or a missing signature, does not; and the hook URL Twilio signs is PUBLIC_BASE_URL + path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { hookUrl, isValidTwilioSignature } from '../../tools/telephony/signature.ts';
import { startTwilioPeer, type TwilioPeer, twilioSignature } from '../support/twilio-peer.ts';

let peer: TwilioPeer;
const URL_SIGNED = 'https://crm.example.com/hooks/twilio/messages?org=1';

beforeAll(async () => {
  peer = await startTwilioPeer();
});

afterAll(async () => {
  await peer?.close();
});

describe('isValidTwilioSignature', () => {
  it("accepts the peer's signature of an inbound message and refuses any change to it", () => {
    const params = peer.inboundMessage('+15551230001', '+15551230000', 'Hello there');
    const signature = peer.sign(URL_SIGNED, params);
    expect(isValidTwilioSignature(peer.authToken, URL_SIGNED, params, signature)).toBe(true);
    expect(
      isValidTwilioSignature(peer.authToken, URL_SIGNED, { ...params, Body: 'Hello therE' }, signature),
    ).toBe(false);
    expect(isValidTwilioSignature(peer.authToken, URL_SIGNED, { ...params, Extra: '1' }, signature)).toBe(
      false,
    );
    expect(
      isValidTwilioSignature(
        peer.authToken,
        'https://crm.example.com/hooks/twilio/messages?org=2',
        params,
        signature,
      ),
    ).toBe(false);
    expect(isValidTwilioSignature('0'.repeat(32), URL_SIGNED, params, signature)).toBe(false);
    expect(isValidTwilioSignature(peer.authToken, URL_SIGNED, params, '')).toBe(false);
    expect(isValidTwilioSignature(peer.authToken, URL_SIGNED, params, undefined)).toBe(false);
    expect(isValidTwilioSignature(peer.authToken, URL_SIGNED, params, 'forged')).toBe(false);
  });

  it('accepts a call status and a message with repeated MediaUrl values as the peer signs them', () => {
    const call = peer.inboundCall('+15551230001', '+15551230000');
    const url = 'https://crm.example.com/hooks/twilio/calls/status';
    expect(isValidTwilioSignature(peer.authToken, url, call, peer.sign(url, call))).toBe(true);
    const media = {
      ...peer.inboundMessage('+15551230001', '+15551230000', ''),
      NumMedia: '2',
      MediaUrl: ['https://media.example.com/b.jpg', 'https://media.example.com/a.jpg'],
    };
    const signature = twilioSignature(peer.authToken, url, media);
    expect(isValidTwilioSignature(peer.authToken, url, media, signature)).toBe(true);
    expect(
      isValidTwilioSignature(
        peer.authToken,
        url,
        { ...media, MediaUrl: ['https://media.example.com/a.jpg'] },
        signature,
      ),
    ).toBe(false);
  });
});

describe('hookUrl', () => {
  it('is PUBLIC_BASE_URL followed by the path', () => {
    const config = loadConfig({ PUBLIC_BASE_URL: 'https://crm.example.com/' });
    expect(hookUrl({ config }, '/hooks/twilio/messages')).toBe(
      'https://crm.example.com/hooks/twilio/messages',
    );
    expect(hookUrl({ config }, 'hooks/twilio/calls')).toBe('https://crm.example.com/hooks/twilio/calls');
  });
});
