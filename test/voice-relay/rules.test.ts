// Locks in a voice agent's conversation without a model: the rules answer (greeting plus the
// best-matching AI-context article's title, or an offer of a person), labelled `rules`; the caller
// asking for a person and the maximum of turns end the call with a handoff; digits and the end are
// in the transcript, which the session closes when the socket does, readable with
// list_voice_sessions / get_voice_session (another organization's is 404) and transcriptOfCall.
import { describe, expect } from 'vitest';
import { transcriptOfCall } from '../../tools/voice-relay/lookups.ts';
import { readOutput, TOOL } from '../fixtures/index.ts';
import { connectTelephony } from '../telephony/kit.ts';
import {
  connectRelay,
  createAgent,
  eventually,
  newCallSid,
  publishArticle,
  relayTest,
  sessionOf,
  setupMessage,
  signedPath,
} from './relay-support.ts';

const test = relayTest({ model: false, env: { VOICE_RELAY_MAX_TURNS: '3' } });

const GREETING = 'Hello, you have reached Acme. How can I help?';

describe('a voice agent answering by the rules (no model configured)', () => {
  test('answers with the greeting and the best-matching article title, labelled rules', async ({
    t,
    org,
    peer,
    harness,
  }) => {
    await connectTelephony(t, org, peer);
    await publishArticle(t, org, 'Opening hours', '<p>Nine to five.</p>');
    await publishArticle(t, org, 'Refund policy', '<p>Thirty days.</p>');
    const agent = await createAgent(t, org, { use_knowledge_base: true });
    const { path, signature } = signedPath(t, agent, peer.authToken);
    const call = await connectRelay(`${harness.url}${path}`, signature);
    const callSid = newCallSid();
    call.send(setupMessage(peer.accountSid, callSid));
    call.send({ type: 'prompt', voicePrompt: 'How does a refund work?', last: true });
    call.send({ type: 'dtmf', digit: '5' });
    call.send({ type: 'prompt', voicePrompt: 'Is the weather nice?', last: true });
    await call.until((frames) => frames.filter((f) => f.last).length === 2);
    expect(call.frames).toEqual([
      {
        type: 'text',
        token: `${GREETING} Our article "Refund policy" covers that; I can also connect you with a person.`,
        last: true,
      },
      {
        type: 'text',
        token: `${GREETING} I cannot answer that myself; shall I connect you with a person?`,
        last: true,
      },
    ]);
    call.ws.close();
    const session = await eventually(
      () => sessionOf(t, org, callSid),
      (s) => s?.ended_at !== null,
    );
    expect(session).toMatchObject({
      agent_id: agent,
      call_sid: callSid,
      from: '+15550001111',
      to: '+15550002222',
      direction: 'inbound',
      handoff: null,
    });
    expect(session?.transcript.map((turn) => [turn.kind, turn.source ?? null])).toEqual([
      ['caller', null],
      ['agent', 'rules'],
      ['dtmf', null],
      ['caller', null],
      ['agent', 'rules'],
      ['end', null],
    ]);
    expect(session?.transcript[2]?.text).toBe('5');

    // Readable by id, not by another organization; and by the call's SID for the call activity.
    const one = await t.request('GET', `/api/v1/voice-sessions/${session?._id}`, { token: org.token });
    expect((await readOutput(one, TOOL.get_voice_session)).voice_session).toEqual(session);
    const theirs = await t.request('GET', `/api/v1/voice-sessions/${session?._id}`, {
      token: (await t.createOrg({ name: 'Nosy' })).token,
    });
    expect(theirs.status).toBe(404);
    const transcript = await t.services.db.withTenant(org.orgId, (tx) =>
      transcriptOfCall(tx, org.orgId, callSid),
    );
    expect(transcript?.turns).toEqual(session?.transcript);
    expect(transcript?.agentId).toBe(agent);
    expect(
      await t.services.db.withTenant(org.orgId, (tx) => transcriptOfCall(tx, org.orgId, 'CAnone')),
    ).toBeNull();
  });

  test('hands the call to a person when the caller asks for one', async ({ t, org, peer, harness }) => {
    await connectTelephony(t, org, peer);
    const agent = await createAgent(t, org);
    const { path, signature } = signedPath(t, agent, peer.authToken);
    const call = await connectRelay(`${harness.url}${path}`, signature);
    const callSid = newCallSid();
    call.send(setupMessage(peer.accountSid, callSid));
    call.send({ type: 'prompt', voicePrompt: 'Can I speak to a real person please?', last: true });
    await call.until((frames) => frames.some((f) => f.type === 'end'));
    expect(call.frames).toEqual([
      { type: 'end', handoffData: JSON.stringify({ reason: 'caller asked for a person', to: 'human' }) },
    ]);
    // Nothing more is answered after the end.
    call.send({ type: 'prompt', voicePrompt: 'Hello?', last: true });
    call.ws.close();
    const session = await eventually(
      () => sessionOf(t, org, callSid),
      (s) => s?.ended_at !== null,
    );
    expect(session?.handoff).toBe('caller asked for a person');
    expect(session?.transcript.map((turn) => turn.kind)).toEqual(['caller', 'end']);
  });

  test('hands the call to a person after the configured maximum of turns', async ({
    t,
    org,
    peer,
    harness,
  }) => {
    await connectTelephony(t, org, peer);
    const agent = await createAgent(t, org);
    const { path, signature } = signedPath(t, agent, peer.authToken);
    const call = await connectRelay(`${harness.url}${path}`, signature);
    const callSid = newCallSid();
    call.send(setupMessage(peer.accountSid, callSid));
    for (const n of [1, 2, 3, 4]) call.send({ type: 'prompt', voicePrompt: `Question ${n}`, last: true });
    await call.until((frames) => frames.some((f) => f.type === 'end'));
    expect(call.frames.filter((f) => f.type === 'text')).toHaveLength(3);
    expect(call.frames.at(-1)).toEqual({
      type: 'end',
      handoffData: JSON.stringify({ reason: 'maximum turns reached', to: 'human' }),
    });
    call.ws.close();
    const session = await eventually(
      () => sessionOf(t, org, callSid),
      (s) => s?.handoff !== null,
    );
    expect(session?.handoff).toBe('maximum turns reached');
  });
});
