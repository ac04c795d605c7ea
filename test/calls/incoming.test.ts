// Locks in the incoming call hook POST /hooks/twilio/voice against the Twilio peer: an active voice agent answers over ConversationRelay (URL on PUBLIC_BASE_URL's host, greeting, language, voice, XML-escaped); a paused or no agent with forward_to puts the caller in conference call-<CallSid> and dials the owner's leg on the peer with TwiML joining it (a failed leg still answers the conference and records why); nobody to take it says so and hangs up; a bad or missing signature is 403 and stores nothing; another organization's number or an unknown one is rejected; the call is recorded once with the lead of the contact with the caller's number.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { VOICE_HOOK_PATH, VOICE_STATUS_HOOK_PATH } from '../../tools/calls/hooks.ts';
import { calls } from '../../tools/calls/tables.ts';
import { hookUrl } from '../../tools/telephony/signature.ts';
import { createContact } from '../fixtures/records.ts';
import { connectTelephony } from '../telephony/kit.ts';
import { callsTest, createAgent, createNumber } from './kit.ts';

const test = callsTest({ env: { PUBLIC_BASE_URL: 'https://crm.example.com' } });

const callRows = (
  t: { services: { db: { system: import('../../core/db/client.ts').Executor } } },
  sid: string,
) => t.services.db.system.select().from(calls).where(eq(calls.callSid, sid));

describe('incoming calls', () => {
  test('an active agent answers over ConversationRelay, the call recorded with the caller’s lead', async ({
    t,
    org,
    peer,
  }) => {
    await connectTelephony(t, org, peer);
    const agentId = await createAgent(t, org, { greeting: 'Hi & welcome to "Acme"', language: 'fr-FR' });
    const { number, id: numberId } = await createNumber(t, org, { default_voice_agent_id: agentId });
    const contact = await createContact(t, org, { phones: [{ phone: '+1 555 123 0042' }] });
    const params = peer.inboundCall('+15551230042', number);
    const res = await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/xml/);
    const xml = await res.text();
    expect(xml).toContain(
      `<Response><Connect><ConversationRelay url="wss://crm.example.com/voice/relay/${agentId}" welcomeGreeting="Hi &amp; welcome to &quot;Acme&quot;" language="fr-FR" voice="Polly.Joanna"/></Connect></Response>`,
    );
    const [row] = await callRows(t, String(params.CallSid));
    expect(row).toMatchObject({
      orgId: org.orgId,
      direction: 'inbound',
      fromNumber: '+15551230042',
      toNumber: number,
      phoneNumberId: numberId,
      leadId: contact.lead_id,
      agentId,
      answeredBy: 'agent',
      status: 'ringing',
      conferenceName: null,
    });
    // The provider retries a hook it got no answer to: the same answer, one row.
    const again = await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params);
    expect(await again.text()).toBe(xml);
    expect(await callRows(t, String(params.CallSid))).toHaveLength(1);
  });

  test('a paused agent with forward_to: the caller waits in the conference, the owner is dialled into it', async ({
    t,
    org,
    peer,
  }) => {
    await connectTelephony(t, org, peer);
    const agentId = await createAgent(t, org);
    const { number } = await createNumber(t, org, {
      default_voice_agent_id: agentId,
      forward_to: '+15559870001',
    });
    const paused = await t.request('PATCH', `/api/v1/voice-agents/${agentId}`, {
      token: org.token,
      body: { status: 'paused' },
    });
    expect(paused.status).toBe(200);
    const params = peer.inboundCall('+15551230043', number);
    const callSid = String(params.CallSid);
    const res = await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params);
    expect(await res.text()).toContain(
      `<Response><Dial><Conference startConferenceOnEnter="true" endConferenceOnExit="true">call-${callSid}</Conference></Dial></Response>`,
    );
    const leg = peer.calls.find((c) => c.direction === 'outbound-api' && c.to === '+15559870001');
    expect(leg).toMatchObject({ from: number, statusCallback: hookUrl(t.services, VOICE_STATUS_HOOK_PATH) });
    expect(leg?.twiml).toContain(`<Dial><Conference>call-${callSid}</Conference></Dial>`);
    const [row] = await callRows(t, callSid);
    expect(row).toMatchObject({
      answeredBy: 'forward',
      agentId: null,
      leadId: null,
      conferenceName: `call-${callSid}`,
      ownerLegSid: leg?.sid,
      ownerLegError: null,
    });
    // A retried hook dials nobody twice.
    await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params);
    expect(peer.calls.filter((c) => c.to === '+15559870001')).toHaveLength(1);
  });

  test("the owner's leg failing still answers the conference and records why", async ({ t, org, peer }) => {
    await connectTelephony(t, org, peer);
    const { number } = await createNumber(t, org, { forward_to: '+15559870002' });
    peer.failNext('call', { status: 400, code: 21215, message: 'Geo permission not enabled' });
    const params = peer.inboundCall('+15551230044', number);
    const res = await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params);
    expect(await res.text()).toContain(
      `<Conference startConferenceOnEnter="true" endConferenceOnExit="true">call-`,
    );
    const [row] = await callRows(t, String(params.CallSid));
    expect(row?.ownerLegSid).toBeNull();
    expect(row?.ownerLegError).toContain('21215');
  });

  test('no agent and no forward_to: a sentence and a hang-up', async ({ t, org, peer }) => {
    await connectTelephony(t, org, peer);
    const { number } = await createNumber(t, org);
    const params = peer.inboundCall('+15551230045', number);
    const xml = await (await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params)).text();
    expect(xml).toMatch(/<Response><Say>[^<]+<\/Say><Hangup\/><\/Response>/);
    expect((await callRows(t, String(params.CallSid)))[0]?.answeredBy).toBe('nobody');
  });

  test('a bad or missing signature is 403 and stores nothing', async ({ t, org, peer }) => {
    await connectTelephony(t, org, peer);
    const { number } = await createNumber(t, org);
    const url = hookUrl(t.services, VOICE_HOOK_PATH);
    const params = peer.inboundCall('+15551230046', number);
    expect((await peer.sendInbound(url, params, { signature: null })).status).toBe(403);
    expect(
      (await peer.sendInbound(url, params, { signature: peer.sign(url, params, '0'.repeat(32)) })).status,
    ).toBe(403);
    // Signed for another URL (the status hook) is no signature of this one.
    expect(
      (
        await peer.sendInbound(url, params, {
          signature: peer.sign(hookUrl(t.services, VOICE_STATUS_HOOK_PATH), params),
        })
      ).status,
    ).toBe(403);
    expect(await callRows(t, String(params.CallSid))).toHaveLength(0);
  });

  test("an unknown Account SID is 403; another organization's number or an unknown one is rejected", async ({
    t,
    org,
    other,
    peer,
  }) => {
    await connectTelephony(t, org, peer);
    const url = hookUrl(t.services, VOICE_HOOK_PATH);
    const theirs = await createNumber(t, other, { forward_to: '+15559870003' });
    const toTheirs = peer.inboundCall('+15551230047', theirs.number);
    const rejected = await peer.sendInbound(url, toTheirs);
    expect(await rejected.text()).toContain('<Response><Reject/></Response>');
    const toNobody = peer.inboundCall('+15551230047', '+15550000001');
    expect(await (await peer.sendInbound(url, toNobody)).text()).toContain('<Response><Reject/></Response>');
    expect(await callRows(t, String(toTheirs.CallSid))).toHaveLength(0);
    expect(peer.calls.filter((c) => c.to === '+15559870003')).toHaveLength(0);
    const unknown = { ...peer.inboundCall('+15551230047', theirs.number), AccountSid: `AC${'1'.repeat(32)}` };
    expect((await peer.sendInbound(url, unknown)).status).toBe(403);
  });

  test('a signed hook without a CallSid is a 400 naming it', async ({ t, org, peer }) => {
    await connectTelephony(t, org, peer);
    const { number } = await createNumber(t, org);
    const { CallSid: _sid, ...params } = peer.inboundCall('+15551230048', number);
    const res = await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('CallSid');
  });
});
