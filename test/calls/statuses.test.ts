// Locks in the call status hook POST /hooks/twilio/voice/status against the Twilio peer: statuses out of order and repeated keep the furthest one with CallDuration and RecordingUrl; the first end makes one call activity on the caller's lead (inbound, duration, recording, outcome, the voice relay's transcript as its note) and one call.completed outbox row carrying it; a busy end is outcome busy; a call without a lead is recorded without an activity; an unsigned status is 403 and changes nothing.
import { and, eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents } from '../../core/db/schema.ts';
import { VOICE_HOOK_PATH, VOICE_STATUS_HOOK_PATH } from '../../tools/calls/hooks.ts';
import { calls } from '../../tools/calls/tables.ts';
import { hookUrl } from '../../tools/telephony/signature.ts';
import { appendTurns, openSession } from '../../tools/voice-relay/store.ts';
import type { TestContext, TestOrg } from '../fixtures/context.ts';
import { createContact } from '../fixtures/records.ts';
import type { TwilioPeer } from '../support/twilio-peer.ts';
import { connectTelephony } from '../telephony/kit.ts';
import { callsTest, createAgent, createNumber } from './kit.ts';

const test = callsTest({ env: { PUBLIC_BASE_URL: 'https://crm.example.com' } });

const RECORDING = 'https://api.twilio.com/2010-04-01/Accounts/AC1/Recordings/RE1';

async function incoming(t: TestContext, peer: TwilioPeer, from: string, to: string): Promise<string> {
  const params = peer.inboundCall(from, to);
  const res = await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params);
  expect(res.status).toBe(200);
  return String(params.CallSid);
}

const callOf = async (t: TestContext, sid: string) =>
  (await t.services.db.system.select().from(calls).where(eq(calls.callSid, sid)))[0];

const completedEvents = (t: TestContext, org: TestOrg) =>
  t.services.db.system
    .select()
    .from(outboxEvents)
    .where(and(eq(outboxEvents.orgId, org.orgId), eq(outboxEvents.event, 'call.completed')));

describe('call statuses', () => {
  test('out of order and repeated: the final status kept, one activity with the transcript, one call.completed', async ({
    t,
    org,
    peer,
  }) => {
    await connectTelephony(t, org, peer);
    const agentId = await createAgent(t, org);
    const { number } = await createNumber(t, org, { default_voice_agent_id: agentId });
    const contact = await createContact(t, org, { phones: [{ phone: '+15551230061' }] });
    const sid = await incoming(t, peer, '+15551230061', number);
    // What the voice relay wrote while the agent talked.
    await t.services.db.withTenant(org.orgId, async (tx) => {
      const id = await openSession(tx, {
        orgId: org.orgId,
        agentId,
        callSid: sid,
        sessionId: 'VX1',
        from: '+15551230061',
        to: number,
        direction: 'inbound',
        startedAt: new Date(),
      });
      await appendTurns(tx, org.orgId, id, [
        { kind: 'caller', text: 'When are you open?', at: new Date().toISOString() },
        { kind: 'agent', text: 'From nine to five.', at: new Date().toISOString(), source: 'rules' },
      ]);
    });
    const url = hookUrl(t.services, VOICE_STATUS_HOOK_PATH);
    const before = (await completedEvents(t, org)).length;
    const answers = await peer.sendStatuses(
      sid,
      ['in-progress', 'completed', 'ringing', 'completed', 'in-progress'],
      {
        url,
        extra: { CallDuration: '42', RecordingUrl: RECORDING },
      },
    );
    expect(answers.map((r) => r.status)).toEqual([204, 204, 204, 204, 204]);
    const call = await callOf(t, sid);
    expect(call).toMatchObject({ status: 'completed', durationSeconds: 42, recordingUrl: RECORDING });
    expect(call?.endedAt).toBeInstanceOf(Date);
    expect(call?.activityId).not.toBeNull();
    const res = await t.request('GET', `/api/v1/activities/${call?.activityId}`, { token: org.token });
    expect(res.status).toBe(200);
    const { activity } = (await res.json()) as { activity: Record<string, unknown> };
    expect(activity).toMatchObject({
      type: 'call',
      lead_id: contact.lead_id,
      direction: 'inbound',
      status: 'completed',
      duration_seconds: 42,
      recording_url: RECORDING,
      outcome: 'connected',
      phone: '+15551230061',
    });
    expect(activity.note).toContain('Caller: When are you open?\nAgent: From nine to five.');
    const events = await completedEvents(t, org);
    expect(events.length - before).toBe(1);
    expect(events.at(-1)?.data).toMatchObject({ _id: call?.activityId, type: 'call', duration_seconds: 42 });
    const timeline = await t.request('GET', `/api/v1/leads/${contact.lead_id}/activities`, {
      token: org.token,
    });
    expect(JSON.stringify(await timeline.json()).split(`"_id":"${call?.activityId}"`).length).toBe(2);
  });

  test('a busy end is the outcome busy; a call without a lead has no activity', async ({ t, org, peer }) => {
    await connectTelephony(t, org, peer);
    const { number } = await createNumber(t, org);
    await createContact(t, org, { phones: [{ phone: '+15551230062' }] });
    const url = hookUrl(t.services, VOICE_STATUS_HOOK_PATH);
    const busy = await incoming(t, peer, '+15551230062', number);
    await peer.sendStatuses(busy, ['busy'], { url });
    const busyCall = await callOf(t, busy);
    expect(busyCall?.status).toBe('busy');
    const res = await t.request('GET', `/api/v1/activities/${busyCall?.activityId}`, { token: org.token });
    expect(((await res.json()) as { activity: { outcome: string } }).activity.outcome).toBe('busy');
    const before = (await completedEvents(t, org)).length;
    const stranger = await incoming(t, peer, '+15551230099', number);
    await peer.sendStatuses(stranger, ['completed'], { url, extra: { CallDuration: '7' } });
    expect(await callOf(t, stranger)).toMatchObject({
      status: 'completed',
      leadId: null,
      activityId: null,
      durationSeconds: 7,
    });
    expect((await completedEvents(t, org)).length).toBe(before);
  });

  test('an unsigned status is 403 and changes nothing', async ({ t, org, peer }) => {
    await connectTelephony(t, org, peer);
    const { number } = await createNumber(t, org);
    const sid = await incoming(t, peer, '+15551230063', number);
    const url = hookUrl(t.services, VOICE_STATUS_HOOK_PATH);
    const params = { CallSid: sid, AccountSid: peer.accountSid, CallStatus: 'completed' };
    expect((await peer.sendInbound(url, params, { signature: null })).status).toBe(403);
    expect((await peer.sendInbound(url, params, { signature: 'forged' })).status).toBe(403);
    expect((await callOf(t, sid))?.status).toBe('ringing');
  });
});
