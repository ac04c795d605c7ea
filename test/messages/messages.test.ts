// Locks in sending SMS and WhatsApp messages through the Twilio peer: Twilio's field names, the row and activity written, the confirm preview, provider refusals, the WhatsApp 24-hour window and templates, the inbound and status hooks (signatures, duplicates, reordered statuses), telephony off, permissions, scopes and tenancy.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { activities } from '../../tools/activities/tables.ts';
import { messages } from '../../tools/messages/tables.ts';
import { telephonySettings } from '../../tools/telephony/tables.ts';
import type { TestContext } from '../fixtures/context.ts';
import { detailFields, readError, readOutput, TOOL } from '../fixtures/index.ts';
import type { TwilioPeer } from '../support/twilio-peer.ts';
import { connectTelephony, telephonyTest } from '../telephony/kit.ts';
import { createNumber, leadWithPhone } from './kit.ts';

// The peer delivers its callbacks and inbound traffic to this file's app (bound once `t` exists).
let app: TestContext | undefined;
const test = telephonyTest({
  options: { withoutRateLimits: true },
  peer: {
    deliver: (url, init) => {
      if (!app) throw new Error('no app to deliver to yet');
      return Promise.resolve(app.app.request(url, init));
    },
  },
});

async function setup(t: TestContext, peer: TwilioPeer) {
  app = t;
  const org = await t.createOrg();
  await connectTelephony(t, org, peer);
  const from = await createNumber(t, org);
  const lead = await leadWithPhone(t, org);
  return { org, from, lead };
}

// The peer has one account, which one organization may hold at a time: each test starts without it.
test.afterEach(async ({ t }) => {
  await t.services.db.system.delete(telephonySettings);
});

const hook = (t: TestContext, path: string) => `${t.config.publicBaseUrl}${path}`;

describe('POST /api/v1/sms', () => {
  test('sends through the provider with Twilio field names, records the message and its activity', async ({
    t,
    peer,
  }) => {
    const { org, from, lead } = await setup(t, peer);
    const res = await t.request('POST', '/api/v1/sms', {
      token: org.token,
      body: { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Hello from Acme' },
    });
    const out = await readOutput(res, TOOL.send_sms, 201);
    expect(out.sent).toBe(true);
    const message = out.message;
    const sent = peer.messages.at(-1);
    expect(sent?.to).toBe(lead.phone);
    expect(message?.sid).toBe(sent?.sid);
    expect(message?.status).toBe('queued');
    expect(message?.channel).toBe('sms');
    const request = peer.requests.filter((r) => r.path.endsWith('/Messages.json')).at(-1);
    expect(request?.params).toMatchObject({
      To: lead.phone,
      From: from.number,
      Body: 'Hello from Acme',
      StatusCallback: hook(t, '/hooks/twilio/status'),
    });
    const [activity] = await t.services.db.system
      .select()
      .from(activities)
      .where(eq(activities.id, message?.activity_id ?? ''));
    expect(activity?.type).toBe('sms');
    expect(activity?.leadId).toBe(lead.leadId);
    expect(activity?.fields).toMatchObject({
      direction: 'outbound',
      body_text: 'Hello from Acme',
      phone: lead.phone,
    });
    // Read back and listed.
    const got = await t.request('GET', `/api/v1/messages/${message?._id}`, { token: org.token });
    expect((await readOutput(got, TOOL.get_message)).message.sid).toBe(sent?.sid);
    const listed = await t.request('GET', `/api/v1/messages?lead_id=${lead.leadId}&channel=sms`, {
      token: org.token,
    });
    expect((await readOutput(listed, TOOL.list_messages)).messages.map((m) => m._id)).toEqual([message?._id]);
    const none = await t.request('GET', `/api/v1/messages?lead_id=${lead.leadId}&direction=inbound`, {
      token: org.token,
    });
    expect((await readOutput(none, TOOL.list_messages)).total).toBe(0);
  });

  test('"confirm": false previews and sends nothing', async ({ t, peer }) => {
    const { org, from, lead } = await setup(t, peer);
    const before = peer.messages.length;
    const res = await t.request('POST', '/api/v1/sms', {
      token: org.token,
      body: {
        lead_id: lead.leadId,
        to: lead.phone,
        from_phone_number_id: from.id,
        body: 'Hi',
        confirm: false,
      },
    });
    const out = await readOutput(res, TOOL.send_sms, 200);
    expect(out.sent).toBe(false);
    expect(out.preview?.to).toEqual([lead.phone]);
    expect(out.preview?.sender).toBe(from.number);
    expect(peer.messages.length).toBe(before);
    const rows = await t.services.db.system.select().from(messages).where(eq(messages.orgId, org.orgId));
    expect(rows).toEqual([]);
  });

  test('a provider refusal records the message failed with the code and sentence', async ({ t, peer }) => {
    const { org, from, lead } = await setup(t, peer);
    peer.failNext('message', {
      status: 400,
      code: 21211,
      message: "The 'To' number is not a valid phone number.",
    });
    const res = await t.request('POST', '/api/v1/sms', {
      token: org.token,
      body: { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Hi' },
    });
    const out = await readOutput(res, TOOL.send_sms, 201);
    expect(out.sent).toBe(false);
    expect(out.message?.status).toBe('failed');
    expect(out.message?.error_code).toBe('21211');
    expect(out.message?.error_message).toContain('not a valid phone number');
    expect(out.message?.sid).toBeNull();
  });

  test('refuses a number without SMS, another organization number, a missing lead, and telephony off', async ({
    t,
    peer,
  }) => {
    const { org, lead } = await setup(t, peer);
    const voiceOnly = await createNumber(t, org, { sms: false, whatsapp: false, voice: true });
    const other = await t.createOrg();
    const foreign = await createNumber(t, other);
    for (const id of [voiceOnly.id, foreign.id]) {
      const res = await t.request('POST', '/api/v1/sms', {
        token: org.token,
        body: { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: id, body: 'Hi' },
      });
      expect(detailFields(await readError(res, 400))).toEqual(['from_phone_number_id']);
    }
    const from = await createNumber(t, org);
    const foreignLead = await leadWithPhone(t, other);
    const res = await t.request('POST', '/api/v1/sms', {
      token: org.token,
      body: { lead_id: foreignLead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Hi' },
    });
    expect(detailFields(await readError(res, 400))).toEqual(['lead_id']);
    const bad = await t.request('POST', '/api/v1/sms', {
      token: org.token,
      body: { lead_id: lead.leadId, to: '0049 151', from_phone_number_id: from.id, body: '' },
    });
    expect(detailFields(await readError(bad, 400)).sort()).toEqual(['body', 'to']);
    await t.services.db.system.delete(telephonySettings);
    const off = await t.request('POST', '/api/v1/sms', {
      token: org.token,
      body: { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Hi' },
    });
    expect((await readError(off, 409)).code).toBe('telephony_not_configured');
    expect(peer.messages.filter((m) => m.from === from.number)).toEqual([]);
  });
});

describe('POST /api/v1/whatsapp: the 24-hour window', () => {
  test('outside the window a free-form message is a 400 naming template_sid; a template goes as ContentSid', async ({
    t,
    peer,
  }) => {
    const { org, from, lead } = await setup(t, peer);
    const body = { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Hello' };
    const refused = await t.request('POST', '/api/v1/whatsapp', { token: org.token, body });
    const error = await readError(refused, 400);
    expect(detailFields(error)).toEqual(['template_sid']);
    expect(error.details?.[0]?.message).toContain('24 hours');
    const template = `HX${'a1'.repeat(16)}`;
    const res = await t.request('POST', '/api/v1/whatsapp', {
      token: org.token,
      body: { ...body, template_sid: template, template_variables: { '1': 'Jane', '2': 'Friday' } },
    });
    const out = await readOutput(res, TOOL.send_whatsapp, 201);
    expect(out.message?.template_sid).toBe(template);
    const request = peer.requests.filter((r) => r.path.endsWith('/Messages.json')).at(-1);
    expect(request?.params).toMatchObject({
      To: `whatsapp:${lead.phone}`,
      From: `whatsapp:${from.number}`,
      ContentSid: template,
    });
    expect(JSON.parse(String(request?.params.ContentVariables))).toEqual({ '1': 'Jane', '2': 'Friday' });
    expect(request?.params.Body).toBeUndefined();
  });

  test('inside the window after an inbound WhatsApp message a free-form one is sent', async ({ t, peer }) => {
    const { org, from, lead } = await setup(t, peer);
    const inbound = peer.inboundMessage(`whatsapp:${lead.phone}`, `whatsapp:${from.number}`, 'Hi there');
    const answer = await peer.sendInbound(hook(t, '/hooks/twilio/messaging'), inbound);
    expect(answer.status).toBe(200);
    const res = await t.request('POST', '/api/v1/whatsapp', {
      token: org.token,
      body: {
        lead_id: lead.leadId,
        to: lead.phone,
        from_phone_number_id: from.id,
        body: 'Thanks for writing',
      },
    });
    const out = await readOutput(res, TOOL.send_whatsapp, 201);
    expect(out.message?.channel).toBe('whatsapp');
    expect(peer.messages.at(-1)?.errorCode).toBeNull();
    expect(peer.messages.at(-1)?.body).toBe('Thanks for writing');
    const [received] = await t.services.db.system
      .select()
      .from(messages)
      .where(eq(messages.sid, String(inbound.MessageSid)));
    expect(received).toMatchObject({ channel: 'whatsapp', direction: 'inbound', fromAddress: lead.phone });
    // WhatsApp's read comes after delivered; a late delivered does not undo it.
    const sid = out.message?.sid ?? '';
    await peer.sendStatuses(sid, ['sent', 'delivered', 'read', 'delivered']);
    const got = await t.request('GET', `/api/v1/messages/${out.message?._id}`, { token: org.token });
    expect((await readOutput(got, TOOL.get_message)).message.status).toBe('read');
  });

  test('refuses a malformed template SID and more than 20 variables', async ({ t, peer }) => {
    const { org, from, lead } = await setup(t, peer);
    const body = { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Hello' };
    const sid = await t.request('POST', '/api/v1/whatsapp', {
      token: org.token,
      body: { ...body, template_sid: 'HX12' },
    });
    expect(detailFields(await readError(sid, 400))).toEqual(['template_sid']);
    const variables = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [String(i + 1), 'x']));
    const many = await t.request('POST', '/api/v1/whatsapp', {
      token: org.token,
      body: { ...body, template_sid: `HX${'0'.repeat(32)}`, template_variables: variables },
    });
    expect(detailFields(await readError(many, 400))).toEqual(['template_variables']);
  });
});

describe('POST /hooks/twilio/messaging', () => {
  test('records an inbound message on the lead once, with its activity; empty TwiML', async ({ t, peer }) => {
    const { org, from, lead } = await setup(t, peer);
    const params = peer.inboundMessage(lead.phone, from.number, 'Call me back');
    const res = await peer.sendInbound(hook(t, '/hooks/twilio/messaging'), params);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/xml');
    expect(await res.text()).toContain('<Response/>');
    const replay = await peer.sendInbound(hook(t, '/hooks/twilio/messaging'), params);
    expect(replay.status).toBe(200);
    const rows = await t.services.db.system.select().from(messages).where(eq(messages.orgId, org.orgId));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      direction: 'inbound',
      channel: 'sms',
      leadId: lead.leadId,
      phoneNumberId: from.id,
      body: 'Call me back',
      status: 'received',
      sid: params.MessageSid,
    });
    const [activity] = await t.services.db.system
      .select()
      .from(activities)
      .where(eq(activities.id, rows[0]?.activityId ?? ''));
    expect(activity).toMatchObject({ type: 'sms', leadId: lead.leadId });
    expect(activity?.fields).toMatchObject({ direction: 'inbound', body_text: 'Call me back' });
  });

  test('a message from an unknown number is stored without a lead', async ({ t, peer }) => {
    const { org, from } = await setup(t, peer);
    const params = peer.inboundMessage('+19995550123', from.number, 'Who is this?');
    expect((await peer.sendInbound(hook(t, '/hooks/twilio/messaging'), params)).status).toBe(200);
    const [row] = await t.services.db.system.select().from(messages).where(eq(messages.orgId, org.orgId));
    expect(row?.leadId).toBeNull();
    expect(row?.activityId).toBeNull();
  });

  test('a bad, a missing or another token signature is a 403 and stores nothing', async ({ t, peer }) => {
    const { org, from, lead } = await setup(t, peer);
    const url = hook(t, '/hooks/twilio/messaging');
    const params = peer.inboundMessage(lead.phone, from.number, 'Forged');
    for (const signature of [null, 'bm90IGEgc2lnbmF0dXJl', peer.sign(url, params, 'f'.repeat(32))]) {
      expect((await peer.sendInbound(url, params, { signature })).status).toBe(403);
    }
    // Signed for another URL.
    const elsewhere = peer.sign(hook(t, '/hooks/twilio/status'), params);
    expect((await peer.sendInbound(url, params, { signature: elsewhere })).status).toBe(403);
    // An unknown account.
    const stranger = { ...params, AccountSid: `AC${'9'.repeat(32)}` };
    expect((await peer.sendInbound(url, stranger)).status).toBe(403);
    const rows = await t.services.db.system.select().from(messages).where(eq(messages.orgId, org.orgId));
    expect(rows).toEqual([]);
  });
});

describe('POST /hooks/twilio/status', () => {
  async function sent(t: TestContext, peer: TwilioPeer) {
    const s = await setup(t, peer);
    const res = await t.request('POST', '/api/v1/sms', {
      token: s.org.token,
      body: {
        lead_id: s.lead.leadId,
        to: s.lead.phone,
        from_phone_number_id: s.from.id,
        body: 'Status test',
      },
    });
    const { message } = await readOutput(res, TOOL.send_sms, 201);
    if (!message?.sid) throw new Error('not sent');
    const read = async () => {
      const got = await t.request('GET', `/api/v1/messages/${message._id}`, { token: s.org.token });
      return (await readOutput(got, TOOL.get_message)).message;
    };
    return { ...s, sid: message.sid, read };
  }

  test('moves a message forward; a late older status and a replay change nothing', async ({ t, peer }) => {
    const { sid, read } = await sent(t, peer);
    const answers = await peer.sendStatuses(sid, ['sending', 'sent', 'delivered']);
    expect(answers.map((a) => a.status)).toEqual([204, 204, 204]);
    expect((await read()).status).toBe('delivered');
    await peer.sendStatuses(sid, ['sent', 'queued', 'delivered']);
    expect((await read()).status).toBe('delivered');
  });

  test('reordered statuses end at the latest; a failure keeps its ErrorCode', async ({ t, peer }) => {
    const { sid, read } = await sent(t, peer);
    await peer.sendStatuses(sid, ['sent', 'sending']);
    expect((await read()).status).toBe('sent');
    await peer.sendStatuses(sid, ['undelivered'], { extra: { ErrorCode: '30003' } });
    const message = await read();
    expect(message.status).toBe('undelivered');
    expect(message.error_code).toBe('30003');
  });

  test('a forged status is a 403 and changes nothing; a call status is answered 204', async ({ t, peer }) => {
    const { sid, read } = await sent(t, peer);
    const url = hook(t, '/hooks/twilio/status');
    const params = { MessageSid: sid, AccountSid: peer.accountSid, MessageStatus: 'delivered' };
    expect((await peer.sendInbound(url, params, { signature: null })).status).toBe(403);
    expect((await read()).status).toBe('queued');
    const call = { CallSid: `CA${'1'.repeat(32)}`, AccountSid: peer.accountSid, CallStatus: 'ringing' };
    expect((await peer.sendInbound(url, call)).status).toBe(204);
  });
});

describe('access', () => {
  test('a read-only user reads but cannot send; tokens need read:telephony or write:telephony', async ({
    t,
    peer,
  }) => {
    const { org, from, lead } = await setup(t, peer);
    const body = { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Hi' };
    const reader = await t.createUser(org.orgId, 'viewer');
    expect((await t.request('POST', '/api/v1/sms', { token: reader.token, body })).status).toBe(403);
    expect((await t.request('GET', '/api/v1/messages', { token: reader.token })).status).toBe(200);
    const readKey = await t.createPat(org.orgId, org.ownerId, ['read:telephony']);
    expect((await t.request('GET', '/api/v1/messages', { token: readKey.token })).status).toBe(200);
    expect((await t.request('POST', '/api/v1/sms', { token: readKey.token, body })).status).toBe(403);
    const otherKey = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    expect((await t.request('GET', '/api/v1/messages', { token: otherKey.token })).status).toBe(403);
    const writeKey = await t.createPat(org.orgId, org.ownerId, ['write:telephony']);
    expect((await t.request('POST', '/api/v1/sms', { token: writeKey.token, body })).status).toBe(201);
  });

  test("another organization's message is a 404 and is not listed", async ({ t, peer }) => {
    const { org, from, lead } = await setup(t, peer);
    const res = await t.request('POST', '/api/v1/sms', {
      token: org.token,
      body: { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Private' },
    });
    const { message } = await readOutput(res, TOOL.send_sms, 201);
    const other = await t.createOrg();
    expect((await t.request('GET', `/api/v1/messages/${message?._id}`, { token: other.token })).status).toBe(
      404,
    );
    const listed = await t.request('GET', '/api/v1/messages', { token: other.token });
    expect((await readOutput(listed, TOOL.list_messages)).total).toBe(0);
  });
});

describe('the sms and whatsapp activity types', () => {
  test('take direction (required), body_text and phone, and refuse other types keys', async ({ t }) => {
    const org = await t.createOrg();
    const lead = await leadWithPhone(t, org);
    for (const type of ['sms', 'whatsapp'] as const) {
      const res = await t.request('POST', '/api/v1/activities', {
        token: org.token,
        body: {
          type,
          lead_id: lead.leadId,
          direction: 'inbound',
          body_text: 'Logged by hand',
          phone: lead.phone,
        },
      });
      const { activity } = await readOutput(res, TOOL.log_activity, 201);
      expect(activity).toMatchObject({
        type,
        direction: 'inbound',
        body_text: 'Logged by hand',
        phone: lead.phone,
      });
      const missing = await t.request('POST', '/api/v1/activities', {
        token: org.token,
        body: { type, lead_id: lead.leadId, body_text: 'No direction' },
      });
      expect(detailFields(await readError(missing, 400))).toEqual(['direction']);
      const foreign = await t.request('POST', '/api/v1/activities', {
        token: org.token,
        body: { type, lead_id: lead.leadId, direction: 'outbound', subject: 'Not a text field' },
      });
      expect(detailFields(await readError(foreign, 400))).toEqual(['subject']);
    }
  });
});
