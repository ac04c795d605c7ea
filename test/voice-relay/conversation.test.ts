// Locks in a voice agent's conversation over the relay with a model (a local fake streaming server):
// the answer streams as `text` tokens then `last`, grounded in a system message holding the agent's
// instructions and its organization's AI-context articles; an interrupt stops the stream and keeps
// what was said; the model's handoff ends the call to a person; a failing model falls back to the
// rules; bad frames are ignored, a setup for another account closes the socket, and every turn is
// in the call's session.
import { describe, expect } from 'vitest';
import { connectTelephony } from '../telephony/kit.ts';
import {
  connectRelay,
  createAgent,
  eventually,
  newCallSid,
  publishArticle,
  relayTest,
  type Script,
  sessionOf,
  setupMessage,
  signedPath,
  sse,
  streams,
} from './relay-support.ts';

const test = relayTest({ model: true });

describe('a voice agent answering with a model', () => {
  test('streams the answer grounded in the instructions and the AI-context articles', async ({
    t,
    org,
    peer,
    model,
    harness,
  }) => {
    if (!model) throw new Error('this file needs the fake model');
    await connectTelephony(t, org, peer);
    await publishArticle(t, org, 'Opening hours', '<p>We open at nine and close at five.</p>');
    await publishArticle(t, org, 'Horaires', '<p>Nous ouvrons à neuf heures.</p>', 'fr');
    const agent = await createAgent(t, org, {
      instructions: 'Answer questions about Acme opening hours.',
      use_knowledge_base: true,
    });
    model.script = streams('We open', ' at nine', ' every weekday.');
    const { path, signature } = signedPath(t, agent, peer.authToken);
    const call = await connectRelay(`${harness.url}${path}`, signature);
    const callSid = newCallSid();
    call.send(setupMessage(peer.accountSid, callSid));
    call.send({ type: 'prompt', voicePrompt: 'When', lang: 'en-US', last: false });
    call.send({ type: 'prompt', voicePrompt: 'When do you open?', lang: 'en-US', last: true });
    await call.until((frames) => frames.some((f) => f.last === true));
    expect(call.frames).toEqual([
      { type: 'text', token: 'We open', last: false },
      { type: 'text', token: ' at nine', last: false },
      { type: 'text', token: ' every weekday.', last: false },
      { type: 'text', token: '', last: true },
    ]);
    // One request (the partial prompt was not acted on), grounded in the agent and its articles.
    expect(model.bodies).toHaveLength(1);
    const [sent] = model.bodies;
    const system = sent?.messages[0];
    expect(system?.role).toBe('system');
    expect(system?.content).toContain('Answer questions about Acme opening hours.');
    expect(system?.content).toContain('Opening hours');
    expect(system?.content).toContain('We open at nine and close at five.');
    expect(system?.content).not.toContain('Nous ouvrons');
    expect(sent?.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Hello, you have reached Acme. How can I help?' },
      { role: 'user', content: 'When do you open?' },
    ]);
    const session = await eventually(
      () => sessionOf(t, org, callSid),
      (s) => s?.transcript.length === 2,
    );
    expect(session?.transcript).toMatchObject([
      { kind: 'caller', text: 'When do you open?', lang: 'en-US' },
      { kind: 'agent', text: 'We open at nine every weekday.', source: 'model', model: 'voice-1' },
    ]);
    // Written while the call goes on: the session is still open.
    expect(session?.ended_at).toBeNull();
    call.ws.close();
  });

  test('stops streaming on an interrupt and keeps what was said', async ({
    t,
    org,
    peer,
    model,
    harness,
  }) => {
    if (!model) throw new Error('this file needs the fake model');
    await connectTelephony(t, org, peer);
    const agent = await createAgent(t, org);
    let requestClosed: () => void = () => {};
    const closed = new Promise<void>((resolve) => {
      requestClosed = resolve;
    });
    const hanging: Script = (res) => {
      res.on('close', () => requestClosed());
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse('We open at nine,'));
      // Never ends: only the relay's abort ends this request.
    };
    model.script = hanging;
    const { path, signature } = signedPath(t, agent, peer.authToken);
    const call = await connectRelay(`${harness.url}${path}`, signature);
    const callSid = newCallSid();
    call.send(setupMessage(peer.accountSid, callSid));
    call.send({ type: 'prompt', voicePrompt: 'When do you open?', last: true });
    await call.until((frames) => frames.length === 1);
    call.send({ type: 'interrupt', utteranceUntilInterrupt: 'We open', durationUntilInterruptMs: 800 });
    await closed;
    const session = await eventually(
      () => sessionOf(t, org, callSid),
      (s) => s?.transcript.some((turn) => turn.kind === 'interrupt') === true,
    );
    expect(session?.transcript).toMatchObject([
      { kind: 'caller', text: 'When do you open?' },
      { kind: 'agent', text: 'We open at nine,', source: 'model', interrupted: true },
      { kind: 'interrupt', text: 'We open' },
    ]);
    expect(call.frames).toEqual([{ type: 'text', token: 'We open at nine,', last: false }]);
    // The next answer's request carries what the caller heard, not what was streamed.
    model.script = streams('Yes.');
    call.send({ type: 'prompt', voicePrompt: 'On Saturdays too?', last: true });
    await call.until((frames) => frames.some((f) => f.last === true));
    expect(model.bodies.at(-1)?.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'We open' },
      { role: 'user', content: 'On Saturdays too?' },
    ]);
    call.ws.close();
  });

  test('ends the call to a person when the model hands it over', async ({ t, org, peer, model, harness }) => {
    if (!model) throw new Error('this file needs the fake model');
    await connectTelephony(t, org, peer);
    const agent = await createAgent(t, org);
    model.script = streams('[[HAND', 'OFF]]');
    const { path, signature } = signedPath(t, agent, peer.authToken);
    const call = await connectRelay(`${harness.url}${path}`, signature);
    const callSid = newCallSid();
    call.send(setupMessage(peer.accountSid, callSid));
    call.send({ type: 'prompt', voicePrompt: 'I have a complaint about my bill.', last: true });
    await call.until((frames) => frames.some((f) => f.type === 'end'));
    expect(call.frames).toEqual([
      { type: 'end', handoffData: JSON.stringify({ reason: 'the agent handed the call over', to: 'human' }) },
    ]);
    const session = await eventually(
      () => sessionOf(t, org, callSid),
      (s) => s?.handoff !== null,
    );
    expect(session?.handoff).toBe('the agent handed the call over');
    call.ws.close();
  });

  test('answers by the rules, labelled, when the model fails', async ({ t, org, peer, model, harness }) => {
    if (!model) throw new Error('this file needs the fake model');
    await connectTelephony(t, org, peer);
    const agent = await createAgent(t, org);
    model.script = (res) => {
      res.writeHead(503).end('busy');
    };
    const { path, signature } = signedPath(t, agent, peer.authToken);
    const call = await connectRelay(`${harness.url}${path}`, signature);
    const callSid = newCallSid();
    call.send(setupMessage(peer.accountSid, callSid));
    call.send({ type: 'prompt', voicePrompt: 'Can you fix my printer?', last: true });
    await call.until((frames) => frames.some((f) => f.last === true));
    expect(call.frames).toEqual([
      {
        type: 'text',
        token:
          'Hello, you have reached Acme. How can I help? I cannot answer that myself; shall I connect you with a person?',
        last: true,
      },
    ]);
    const session = await eventually(
      () => sessionOf(t, org, callSid),
      (s) => s?.transcript.length === 2,
    );
    expect(session?.transcript[1]).toMatchObject({ kind: 'agent', source: 'rules' });
    expect(session?.transcript[1]?.model).toBeUndefined();
    call.ws.close();
  });

  test('ignores bad JSON, unknown types and invalid messages; closes on a binary frame', async ({
    t,
    org,
    peer,
    model,
    harness,
  }) => {
    if (!model) throw new Error('this file needs the fake model');
    await connectTelephony(t, org, peer);
    const agent = await createAgent(t, org);
    model.script = streams('Fine.');
    const { path, signature } = signedPath(t, agent, peer.authToken);
    const call = await connectRelay(`${harness.url}${path}`, signature);
    call.ws.send('{not json');
    call.send({ type: 'prompt', voicePrompt: 'Before setup', last: true });
    call.send(setupMessage(peer.accountSid, newCallSid()));
    call.send({ type: 'teleport', where: 'moon' });
    call.send({ type: 'prompt', voicePrompt: 42 });
    call.send({ type: 'prompt', voicePrompt: 'Still there?', last: true });
    await call.until((frames) => frames.some((f) => f.last === true));
    expect(call.frames.map((f) => f.token).join('')).toBe('Fine.');
    expect(model.bodies.at(-1)?.messages.filter((m) => m.role === 'user')).toEqual([
      { role: 'user', content: 'Still there?' },
    ]);
    call.ws.send(Buffer.from([1, 2, 3]));
    expect(await call.closed).toBe(1003);
  });

  test('closes the socket when setup names another account', async ({ t, org, peer, harness }) => {
    await connectTelephony(t, org, peer);
    const agent = await createAgent(t, org);
    const { path, signature } = signedPath(t, agent, peer.authToken);
    const call = await connectRelay(`${harness.url}${path}`, signature);
    const callSid = newCallSid();
    call.send(setupMessage(`AC${'e'.repeat(32)}`, callSid));
    expect(await call.closed).toBe(1008);
    expect(await sessionOf(t, org, callSid)).toBeUndefined();
  });
});
