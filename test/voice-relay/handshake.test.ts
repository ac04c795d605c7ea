// Locks in the voice relay's handshake (/voice/relay/:agentId): Twilio's signature over the wss URL
// with the agent's organization's token opens it; a bad or missing signature, another organization's
// token or an organization without telephony is 403; an unknown, malformed, paused or trashed agent 404.
import { describe, expect } from 'vitest';
import { authTokenContext } from '../../tools/telephony/store.ts';
import { telephonySettings } from '../../tools/telephony/tables.ts';
import { connectTelephony } from '../telephony/kit.ts';
import { createAgent, handshake, relayTest, signedPath } from './relay-support.ts';

const test = relayTest({ model: false });

describe('the voice relay handshake', () => {
  test('opens with the signature of the wss URL and the query', async ({ t, org, peer, harness }) => {
    await connectTelephony(t, org, peer);
    const agent = await createAgent(t, org);
    const plain = signedPath(t, agent, peer.authToken);
    expect(await handshake(`${harness.url}${plain.path}`, { 'x-twilio-signature': plain.signature })).toBe(
      'open',
    );
    const query = signedPath(t, agent, peer.authToken, '?lang=en-US');
    expect(await handshake(`${harness.url}${query.path}`, { 'x-twilio-signature': query.signature })).toBe(
      'open',
    );
    // The signature of the path without its query does not open it with the query.
    expect(await handshake(`${harness.url}${query.path}`, { 'x-twilio-signature': plain.signature })).toBe(
      403,
    );
  });

  test('refuses a missing or bad signature, and another organization’s token, with 403', async ({
    t,
    org,
    other,
    peer,
    harness,
  }) => {
    await connectTelephony(t, org, peer);
    const agent = await createAgent(t, org);
    const { path, signature } = signedPath(t, agent, peer.authToken);
    expect(await handshake(`${harness.url}${path}`)).toBe(403);
    expect(await handshake(`${harness.url}${path}`, { 'x-twilio-signature': `x${signature}` })).toBe(403);
    const forged = signedPath(t, agent, 'f'.repeat(32));
    expect(await handshake(`${harness.url}${path}`, { 'x-twilio-signature': forged.signature })).toBe(403);
    // Both organizations connected: each one's agent opens with its own token only.
    const otherToken = 'b'.repeat(32);
    await t.services.db.system.insert(telephonySettings).values({
      orgId: other.orgId,
      accountSid: `AC${'b'.repeat(32)}`,
      authToken: t.services.secrets.encryptSecret(otherToken, authTokenContext(other.orgId)),
      authTokenLast4: 'bbbb',
      verifiedAt: new Date(),
    });
    const theirs = await createAgent(t, other);
    const crossed = signedPath(t, theirs, peer.authToken);
    expect(
      await handshake(`${harness.url}${crossed.path}`, { 'x-twilio-signature': crossed.signature }),
    ).toBe(403);
    const ours = signedPath(t, agent, otherToken);
    expect(await handshake(`${harness.url}${ours.path}`, { 'x-twilio-signature': ours.signature })).toBe(403);
    const own = signedPath(t, theirs, otherToken);
    expect(await handshake(`${harness.url}${own.path}`, { 'x-twilio-signature': own.signature })).toBe(
      'open',
    );
  });

  test('refuses with 404 an unknown, malformed, paused or trashed agent', async ({
    t,
    org,
    peer,
    harness,
  }) => {
    await connectTelephony(t, org, peer);
    const unknown = signedPath(t, 'a'.repeat(24), peer.authToken);
    expect(
      await handshake(`${harness.url}${unknown.path}`, { 'x-twilio-signature': unknown.signature }),
    ).toBe(404);
    const malformed = signedPath(t, 'not-an-id', peer.authToken);
    expect(
      await handshake(`${harness.url}${malformed.path}`, { 'x-twilio-signature': malformed.signature }),
    ).toBe(404);
    const paused = await createAgent(t, org, { status: 'paused' });
    const p = signedPath(t, paused, peer.authToken);
    expect(await handshake(`${harness.url}${p.path}`, { 'x-twilio-signature': p.signature })).toBe(404);
    const trashed = await createAgent(t, org);
    await t.request('DELETE', `/api/v1/voice-agents/${trashed}`, { token: org.token });
    const d = signedPath(t, trashed, peer.authToken);
    expect(await handshake(`${harness.url}${d.path}`, { 'x-twilio-signature': d.signature })).toBe(404);
  });

  test('refuses with 403 the agent of an organization without telephony', async ({ t, peer, harness }) => {
    const agent = await createAgent(t, await t.createOrg({ name: 'No telephony' }));
    const { path, signature } = signedPath(t, agent, peer.authToken);
    expect(await handshake(`${harness.url}${path}`, { 'x-twilio-signature': signature })).toBe(403);
  });
});
