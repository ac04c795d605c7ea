// Locks in what the Twilio-compatible peer (test/support/twilio-peer.ts) answers as Twilio's REST API
// does, through plain HTTP as any Twilio client speaks it: Basic authentication, form parameters,
// 201 JSON with 34-character SIDs and RFC 2822 dates, Twilio's error bodies and codes, conference
// participants with coaching, and status callbacks POSTed with an X-Twilio-Signature, in the order
// and number a test asks for. (That signature is checked against the `twilio` package's own
// validator by the telephony tests, the server's side of it.)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FormParams,
  formBody,
  startTwilioPeer,
  type TwilioPeer,
  twilioSignature,
} from './twilio-peer.ts';

let peer: TwilioPeer;
let hook: {
  url: string;
  received: Array<{ params: FormParams; signature: string | undefined }>;
  close(): Promise<void>;
};

beforeAll(async () => {
  const received: Array<{ params: FormParams; signature: string | undefined }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      received.push({
        params: Object.fromEntries(new URLSearchParams(body)),
        signature: req.headers['x-twilio-signature'] as string | undefined,
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/twilio/status`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  peer = await startTwilioPeer();
});

afterAll(async () => {
  await Promise.all([peer?.close(), hook?.close()]);
});

function api(
  path: string,
  params: FormParams,
  auth = `${peer.accountSid}:${peer.authToken}`,
  method = 'POST',
) {
  return fetch(`${peer.url}/2010-04-01/Accounts/${peer.accountSid}${path}`, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(auth).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: method === 'GET' || method === 'DELETE' ? undefined : formBody(params),
  });
}

describe('the Twilio-compatible peer', () => {
  it('refuses a wrong secret with 401 and code 20003, and records the attempt', async () => {
    const res = await api(
      '/Messages.json',
      { To: '+15551230001', From: '+15551230000', Body: 'hi' },
      `${peer.accountSid}:nope`,
    );
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      code: 20003,
      message: 'Authenticate',
      more_info: 'https://www.twilio.com/docs/errors/20003',
      status: 401,
    });
    expect(peer.requests.at(-1)).toMatchObject({ method: 'POST', authenticated: false });
    expect(peer.messages).toHaveLength(0);
  });

  it('answers the account resource to its own login, 401 to a wrong token or another account', async () => {
    const auth = (user: string, secret: string) => ({
      authorization: `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`,
    });
    const res = await fetch(`${peer.url}/2010-04-01/Accounts/${peer.accountSid}.json`, {
      headers: auth(peer.accountSid, peer.authToken),
    });
    expect(res.status).toBe(200);
    const account = (await res.json()) as Record<string, unknown>;
    expect(account).toMatchObject({
      sid: peer.accountSid,
      friendly_name: 'My first Twilio account',
      status: 'active',
      uri: `/2010-04-01/Accounts/${peer.accountSid}.json`,
    });
    expect(String(account.date_created)).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    const wrong = await fetch(`${peer.url}/2010-04-01/Accounts/${peer.accountSid}.json`, {
      headers: auth(peer.accountSid, 'f'.repeat(32)),
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ code: 20003 });
    const other = `AC${'0'.repeat(32)}`;
    const elsewhere = await fetch(`${peer.url}/2010-04-01/Accounts/${other}.json`, {
      headers: auth(other, peer.authToken),
    });
    expect(elsewhere.status).toBe(401);
  });

  it("creates a message as Twilio answers it: 201, an SM SID, status queued, RFC 2822 dates, the request's fields", async () => {
    const res = await api('/Messages.json', {
      To: '+15551230001',
      From: '+15551230000',
      Body: 'Your quote is ready',
      StatusCallback: hook.url,
    });
    expect(res.status).toBe(201);
    const message = await res.json();
    expect(message).toMatchObject({
      account_sid: peer.accountSid,
      to: '+15551230001',
      from: '+15551230000',
      body: 'Your quote is ready',
      status: 'queued',
      direction: 'outbound-api',
      api_version: '2010-04-01',
      error_code: null,
    });
    expect(message.sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(message.date_created).toMatch(
      /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000$/,
    );
    expect(peer.messages.at(-1)).toMatchObject({
      sid: message.sid,
      statusCallback: hook.url,
      channel: 'sms',
    });
  });

  it("answers Twilio's error codes for a missing or invalid To, a missing From and an empty message", async () => {
    const cases: Array<[FormParams, number]> = [
      [{ From: '+15551230000', Body: 'x' }, 21604],
      [{ To: '555-0100', From: '+15551230000', Body: 'x' }, 21211],
      [{ To: '+15551230001', Body: 'x' }, 21603],
      [{ To: '+15551230001', From: '+15551230000' }, 21602],
      [{ To: '+15551230001', From: '+15551230000', ContentSid: 'HX123' }, 21656],
    ];
    for (const [params, code] of cases) {
      const res = await api('/Messages.json', params);
      expect(res.status, String(code)).toBe(400);
      expect(await res.json()).toMatchObject({ code, status: 400 });
    }
  });

  it('posts status callbacks signed over the URL and sorted parameters, duplicated and out of order on demand', async () => {
    const created = await (
      await api('/Messages.json', {
        To: '+15551230002',
        From: '+15551230000',
        Body: 'x',
        StatusCallback: hook.url,
      })
    ).json();
    const before = hook.received.length;
    const answers = await peer.sendStatuses(created.sid, ['delivered', 'sent', 'delivered']);
    expect(answers.map((r) => r.status)).toEqual([204, 204, 204]);
    const got = hook.received.slice(before);
    expect(got.map((r) => r.params.MessageStatus)).toEqual(['delivered', 'sent', 'delivered']);
    for (const { params, signature } of got) {
      expect(params).toMatchObject({
        MessageSid: created.sid,
        AccountSid: peer.accountSid,
        To: '+15551230002',
      });
      expect(signature).toBe(twilioSignature(peer.authToken, hook.url, params));
      expect(signature).not.toBe(twilioSignature('another-token', hook.url, params));
    }
  });

  it('fails a free-form WhatsApp message outside the 24-hour window with 63016, and delivers a template or an answer inside it', async () => {
    const customer = '+15551239999';
    const outside = await (
      await api('/Messages.json', {
        To: `whatsapp:${customer}`,
        From: 'whatsapp:+15551230000',
        Body: 'hello',
        StatusCallback: hook.url,
      })
    ).json();
    expect(outside.status).toBe('queued');
    const before = hook.received.length;
    await peer.sendStatuses(outside.sid, ['failed']);
    expect(hook.received[before]?.params).toMatchObject({ MessageStatus: 'failed', ErrorCode: '63016' });

    const template = await api('/Messages.json', {
      To: `whatsapp:${customer}`,
      From: 'whatsapp:+15551230000',
      ContentSid: `HX${'a'.repeat(32)}`,
      ContentVariables: JSON.stringify({ 1: 'Ada' }),
    });
    expect(template.status).toBe(201);
    expect(peer.messages.at(-1)).toMatchObject({ contentSid: `HX${'a'.repeat(32)}`, errorCode: null });

    await peer.sendInbound(hook.url, {
      ...peer.inboundMessage(`whatsapp:${customer}`, 'whatsapp:+15551230000', 'hi!'),
    });
    await api('/Messages.json', {
      To: `whatsapp:${customer}`,
      From: 'whatsapp:+15551230000',
      Body: 'answer',
    });
    expect(peer.messages.at(-1)?.errorCode).toBeNull();
  });

  it('adds conference participants (muted listener, coach with CallSidToCoach), updates and removes them, 404 for an unknown one', async () => {
    const agent = await (
      await api('/Conferences/call-42/Participants.json', { From: '+15551230000', To: '+15551230003' })
    ).json();
    expect(agent.conference_sid).toMatch(/^CF[0-9a-f]{32}$/);
    const listener = await api(`/Conferences/${agent.conference_sid}/Participants.json`, {
      From: '+15551230000',
      To: '+15551230004',
      Muted: 'true',
    });
    expect(listener.status).toBe(201);
    expect(await listener.json()).toMatchObject({ muted: true, coaching: false });
    const coach = await (
      await api(`/Conferences/${agent.conference_sid}/Participants.json`, {
        From: '+15551230000',
        To: '+15551230005',
        Coaching: 'true',
        CallSidToCoach: agent.call_sid,
      })
    ).json();
    expect(coach).toMatchObject({ coaching: true, call_sid_to_coach: agent.call_sid, muted: false });
    const noTarget = await api(`/Conferences/${agent.conference_sid}/Participants.json`, {
      From: '+15551230000',
      To: '+15551230006',
      Coaching: 'true',
    });
    expect(noTarget.status).toBe(400);

    const barge = await api(`/Conferences/${agent.conference_sid}/Participants/${coach.call_sid}.json`, {
      Coaching: 'false',
    });
    expect(await barge.json()).toMatchObject({ coaching: false, call_sid_to_coach: null });
    expect(
      (
        await api(
          `/Conferences/${agent.conference_sid}/Participants/${coach.call_sid}.json`,
          {},
          undefined,
          'DELETE',
        )
      ).status,
    ).toBe(204);
    const gone = await api(
      `/Conferences/${agent.conference_sid}/Participants/${coach.call_sid}.json`,
      {},
      undefined,
      'DELETE',
    );
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 20404 });
  });

  it('creates calls and sends their progress, with a forged or missing signature on inbound traffic when asked', async () => {
    const call = await (
      await api('/Calls.json', {
        To: '+15551230007',
        From: '+15551230000',
        Url: 'https://example.com/twiml',
        StatusCallback: hook.url,
      })
    ).json();
    expect(call).toMatchObject({ status: 'queued', direction: 'outbound-api' });
    expect((await api('/Calls.json', { To: '+15551230007', From: '+15551230000' })).status).toBe(400);
    const before = hook.received.length;
    await peer.sendStatuses(call.sid, ['completed', 'ringing'], { extra: { CallDuration: '42' } });
    expect(
      hook.received
        .slice(before)
        .map((r) => [r.params.CallStatus, r.params.CallDuration, r.params.SequenceNumber]),
    ).toEqual([
      ['completed', '42', '0'],
      ['ringing', '42', '1'],
    ]);
    const inbound = peer.inboundCall('+15551230008', '+15551230000');
    await peer.sendInbound(hook.url, inbound, { signature: null });
    await peer.sendInbound(hook.url, inbound, { signature: 'forged' });
    expect(hook.received.slice(-2).map((r) => r.signature)).toEqual([undefined, 'forged']);
  });

  it('answers the next create with the error a test asks for, once', async () => {
    peer.failNext('message', { status: 429, code: 20429, message: 'Too Many Requests' });
    const params = { To: '+15551230001', From: '+15551230000', Body: 'x' };
    expect((await api('/Messages.json', params)).status).toBe(429);
    expect((await api('/Messages.json', params)).status).toBe(201);
  });
});
