// Locks in call monitoring over REST against the Twilio peer: listen, whisper and barge add the supervisor to conference call-<CallSid> with Muted / Coaching + CallSidToCoach (the owner's leg) and record the session (shown by get_call); stop removes the participant; an unknown participant is 404; the stop row's bounds are 400s naming the fields; a call that is over or not in a conference is 409 call_not_monitorable; the plan gate (402 on pro), the permission (403 for a member) and another organization's call (404).
import { describe, expect } from 'vitest';
import { VOICE_HOOK_PATH, VOICE_STATUS_HOOK_PATH } from '../../tools/calls/hooks.ts';
import { hookUrl } from '../../tools/telephony/signature.ts';
import type { TestContext, TestOrg } from '../fixtures/context.ts';
import { detailFields, readError } from '../fixtures/index.ts';
import { createContact } from '../fixtures/records.ts';
import type { TwilioPeer } from '../support/twilio-peer.ts';
import { connectTelephony } from '../telephony/kit.ts';
import { callsTest, createAgent, createNumber } from './kit.ts';

const test = callsTest({ plan: 'enterprise', otherPlan: 'pro' });
const SUPERVISOR = '+15557770001';

/** A forwarded incoming call of `org`: its SID and the owner's leg SID. */
async function forwardedCall(t: TestContext, org: TestOrg, peer: TwilioPeer) {
  await connectTelephony(t, org, peer);
  const { number } = await createNumber(t, org, { forward_to: '+15559870010' });
  const params = peer.inboundCall('+15551230070', number);
  const res = await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params);
  expect(res.status).toBe(200);
  const callSid = String(params.CallSid);
  const leg = peer.calls.find((c) => c.twiml?.includes(`call-${callSid}`));
  return { callSid, number, ownerLeg: leg?.sid ?? '' };
}

const start = (t: TestContext, token: string, body: unknown) =>
  t.request('POST', '/api/v1/call-monitor/start', { token, body });
const stop = (t: TestContext, token: string, body: unknown) =>
  t.request('POST', '/api/v1/call-monitor/stop', { token, body });

interface Monitor {
  _id: string;
  call_sid: string;
  participant_call_sid: string;
  mode: string;
  started_at: string;
}

async function started(res: Response): Promise<Monitor> {
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { monitor: Monitor }).monitor;
}

describe('call monitoring', () => {
  test('listen, whisper and barge join the conference as the provider needs; stop removes; get_call shows the sessions', async ({
    t,
    org,
    peer,
  }) => {
    const { callSid, number, ownerLeg } = await forwardedCall(t, org, peer);
    const listen = await started(
      await start(t, org.token, { call_sid: callSid, mode: 'listen', supervisor_phone: SUPERVISOR }),
    );
    expect(listen).toMatchObject({ call_sid: callSid, mode: 'listen' });
    const whisper = await started(
      await start(t, org.token, { call_sid: callSid, mode: 'whisper', supervisor_phone: SUPERVISOR }),
    );
    const barge = await started(
      await start(t, org.token, { call_sid: callSid, mode: 'barge', supervisor_phone: SUPERVISOR }),
    );
    const participant = (sid: string) => peer.participants.find((p) => p.callSid === sid);
    expect(participant(listen.participant_call_sid)).toMatchObject({
      conferenceName: `call-${callSid}`,
      from: number,
      to: SUPERVISOR,
      muted: true,
      coaching: false,
    });
    expect(participant(whisper.participant_call_sid)).toMatchObject({
      conferenceName: `call-${callSid}`,
      muted: false,
      coaching: true,
      callSidToCoach: ownerLeg,
    });
    expect(participant(barge.participant_call_sid)).toMatchObject({
      muted: false,
      coaching: false,
      callSidToCoach: null,
    });

    const res = await stop(t, org.token, {
      call_sid: callSid,
      participant_call_sid: whisper.participant_call_sid,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: 'Call monitoring stopped' });
    expect(participant(whisper.participant_call_sid)?.removed).toBe(true);
    expect(participant(listen.participant_call_sid)?.removed).toBe(false);
    // Stopped once: a second stop finds no live session.
    expect((await stop(t, org.token, { participant_call_sid: whisper.participant_call_sid })).status).toBe(
      404,
    );

    const list = await t.request('GET', `/api/v1/calls?call_sid=${callSid}`, { token: org.token });
    const callId = ((await list.json()) as { calls: { _id: string }[] }).calls[0]?._id;
    const got = await t.request('GET', `/api/v1/calls/${callId}`, { token: org.token });
    const { monitors } = (await got.json()) as { monitors: (Monitor & { ended_at: string | null })[] };
    expect(monitors.map((m) => [m.mode, m.ended_at === null])).toEqual([
      ['listen', true],
      ['whisper', false],
      ['barge', true],
    ]);
  });

  test("the sessions are shown on the call's activity when the call ends", async ({ t, org, peer }) => {
    await createContact(t, org, { phones: [{ phone: '+15551230070' }] });
    const { callSid } = await forwardedCall(t, org, peer);
    const listen = await started(
      await start(t, org.token, { call_sid: callSid, mode: 'listen', supervisor_phone: SUPERVISOR }),
    );
    await started(
      await start(t, org.token, { call_sid: callSid, mode: 'barge', supervisor_phone: SUPERVISOR }),
    );
    expect((await stop(t, org.token, { participant_call_sid: listen.participant_call_sid })).status).toBe(
      200,
    );
    await peer.sendStatuses(callSid, ['completed'], {
      url: hookUrl(t.services, VOICE_STATUS_HOOK_PATH),
      extra: { CallDuration: '90' },
    });
    const list = await t.request('GET', `/api/v1/calls?call_sid=${callSid}`, { token: org.token });
    const activityId = ((await list.json()) as { calls: { activity_id: string }[] }).calls[0]?.activity_id;
    const res = await t.request('GET', `/api/v1/activities/${activityId}`, { token: org.token });
    const note = ((await res.json()) as { activity: { note: string } }).activity.note;
    expect(note).toMatch(
      new RegExp(
        `^Monitored\nlisten by ${org.ownerId} from .+ to .+ \\(participant ${listen.participant_call_sid}\\)\nbarge by `,
      ),
    );
  });

  test('an unknown participant, or one the provider no longer has, is 404', async ({ t, org, peer }) => {
    const { callSid } = await forwardedCall(t, org, peer);
    expect((await stop(t, org.token, { participant_call_sid: `CA${'0'.repeat(32)}` })).status).toBe(404);
    const listen = await started(
      await start(t, org.token, { call_sid: callSid, mode: 'listen', supervisor_phone: SUPERVISOR }),
    );
    // Named with another call: not this call's monitor.
    expect(
      (
        await stop(t, org.token, {
          call_sid: `CA${'1'.repeat(32)}`,
          participant_call_sid: listen.participant_call_sid,
        })
      ).status,
    ).toBe(404);
    const gone = peer.participants.find((p) => p.callSid === listen.participant_call_sid);
    if (gone) gone.removed = true;
    expect((await stop(t, org.token, { participant_call_sid: listen.participant_call_sid })).status).toBe(
      404,
    );
  });

  test("the stop row's bounds are 400s naming the fields; start needs a call", async ({ t, org }) => {
    const missing = await stop(t, org.token, {});
    expect(missing.status).toBe(400);
    expect(detailFields(await readError(missing, 400))).toContain('participant_call_sid');
    const bad = await stop(t, org.token, {
      participant_call_sid: 'x'.repeat(65),
      call_sid: '',
      activity_id: 'nope',
    });
    expect(bad.status).toBe(400);
    expect(detailFields(await readError(bad, 400))).toEqual(
      expect.arrayContaining(['participant_call_sid', 'call_sid', 'activity_id']),
    );
    const noCall = await start(t, org.token, { mode: 'listen', supervisor_phone: SUPERVISOR });
    expect(noCall.status).toBe(400);
    expect(detailFields(await readError(noCall, 400))).toEqual(
      expect.arrayContaining(['call_sid', 'activity_id']),
    );
    const badPhone = await start(t, org.token, { call_sid: 'CA1', mode: 'spy', supervisor_phone: '555' });
    expect(detailFields(await readError(badPhone, 400))).toEqual(
      expect.arrayContaining(['mode', 'supervisor_phone']),
    );
  });

  test('a call that is over, or answered by an agent (no conference), is 409 call_not_monitorable', async ({
    t,
    org,
    peer,
  }) => {
    const { callSid } = await forwardedCall(t, org, peer);
    await peer.sendStatuses(callSid, ['completed'], { url: hookUrl(t.services, VOICE_STATUS_HOOK_PATH) });
    const over = await start(t, org.token, {
      call_sid: callSid,
      mode: 'listen',
      supervisor_phone: SUPERVISOR,
    });
    expect(over.status).toBe(409);
    expect((await readError(over, 409)).code).toBe('call_not_monitorable');
    const agentId = await createAgent(t, org);
    const { number } = await createNumber(t, org, {
      default_voice_agent_id: agentId,
      forward_to: '+15559870011',
    });
    const params = peer.inboundCall('+15551230071', number);
    await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params);
    const agentCall = await start(t, org.token, {
      call_sid: params.CallSid,
      mode: 'barge',
      supervisor_phone: SUPERVISOR,
    });
    expect(agentCall.status).toBe(409);
    expect((await readError(agentCall, 409)).code).toBe('call_not_monitorable');
  });

  test("the plan (402 on pro), the permission (403 for a member) and another organization's call (404)", async ({
    t,
    org,
    other,
    peer,
  }) => {
    const { callSid } = await forwardedCall(t, org, peer);
    const body = { call_sid: callSid, mode: 'listen', supervisor_phone: SUPERVISOR };
    expect((await start(t, other.token, body)).status).toBe(402);
    expect((await stop(t, other.token, { participant_call_sid: 'CA1' })).status).toBe(402);
    const member = await t.createUser(org.orgId, 'member');
    expect((await start(t, member.token, body)).status).toBe(403);
    const manager = await t.createUser(org.orgId, 'manager');
    const mine = await started(await start(t, manager.token, body));
    const third = await t.createOrg({ plan: 'enterprise', name: 'Third Org' });
    expect((await start(t, third.token, body)).status).toBe(404);
    expect((await stop(t, third.token, { participant_call_sid: mine.participant_call_sid })).status).toBe(
      404,
    );
    expect(peer.participants.find((p) => p.callSid === mine.participant_call_sid)?.removed).toBe(false);
  });
});
