// Locks in the message sender's outcomes on the leased-row kit: a "try later" refusal (429) goes back to queued and is sent once by a later attempt, a provider error that may have acted (5xx) ends unknown and is never resent, a sender that died holding its claim leaves a message the sweep ends unknown without sending, and a sent message is never sent again by its job.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { attemptMessage, messageSweep } from '../../tools/messages/send.ts';
import { messages } from '../../tools/messages/tables.ts';
import { telephonySettings } from '../../tools/telephony/tables.ts';
import type { TestContext } from '../fixtures/context.ts';
import { readOutput, TOOL } from '../fixtures/index.ts';
import type { TwilioPeer } from '../support/twilio-peer.ts';
import { connectTelephony, telephonyTest } from '../telephony/kit.ts';
import { createNumber, leadWithPhone } from './kit.ts';

const test = telephonyTest({ options: { withoutRateLimits: true } });

test.afterEach(async ({ t }) => {
  await t.services.db.system.delete(telephonySettings);
});

const MINUTE = 60_000;

async function send(t: TestContext, peer: TwilioPeer) {
  const org = await t.createOrg();
  await connectTelephony(t, org, peer);
  const from = await createNumber(t, org);
  const lead = await leadWithPhone(t, org);
  const res = await t.request('POST', '/api/v1/sms', {
    token: org.token,
    body: { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Once only' },
  });
  const out = await readOutput(res, TOOL.send_sms, 201);
  const id = out.message?._id ?? '';
  const row = async () => {
    const [found] = await t.services.db.system.select().from(messages).where(eq(messages.id, id));
    if (!found) throw new Error('no message row');
    return found;
  };
  return { out, id, row, sentTo: () => peer.messages.filter((m) => m.to === lead.phone) };
}

describe('the message sender', () => {
  test('a 429 goes back to queued; the next attempt sends it once; its job then finds nothing to do', async ({
    t,
    peer,
  }) => {
    peer.failNext('message', { status: 429, code: 20429, message: 'Too Many Requests' });
    const { out, id, row, sentTo } = await send(t, peer);
    expect(out.message?.status).toBe('queued');
    expect(out.message?.sid).toBeNull();
    expect(out.message?.error_message).toContain('Too Many Requests');
    expect(sentTo()).toHaveLength(0);
    const waiting = await row();
    expect(waiting.attempts).toBe(1);
    // Not due before its backoff.
    expect(await attemptMessage(t.services, id, new Date(Date.now() + MINUTE / 2))).toBe('skipped');
    expect(await attemptMessage(t.services, id, new Date(Date.now() + 2 * MINUTE))).toBe('sent');
    expect(sentTo()).toHaveLength(1);
    expect((await row()).sid).toBe(sentTo()[0]?.sid);
    expect(await attemptMessage(t.services, id, new Date(Date.now() + 10 * MINUTE))).toBe('skipped');
    expect(sentTo()).toHaveLength(1);
  });

  test('a provider error that may have acted ends unknown and is never resent', async ({ t, peer }) => {
    peer.failNext('message', { status: 500, code: 20500, message: 'Internal Server Error' });
    const { out, id, row, sentTo } = await send(t, peer);
    expect(out.sent).toBe(true);
    expect(out.message?.status).toBe('unknown');
    expect(out.message?.error_message).toContain('outcome unknown');
    expect(await attemptMessage(t.services, id, new Date(Date.now() + 10 * MINUTE))).toBe('skipped');
    await messageSweep.run(t.services, 0);
    expect((await row()).status).toBe('unknown');
    expect(sentTo()).toHaveLength(0);
  });

  test('a claim whose sender died is ended unknown by the sweep, not sent again', async ({ t, peer }) => {
    peer.failNext('message', { status: 429, code: 20429, message: 'Too Many Requests' });
    const { id, row, sentTo } = await send(t, peer);
    // As if a sender had claimed it and died during the provider call: its lease is over.
    await t.services.db.system
      .update(messages)
      .set({ status: 'sending', attempts: 2, nextAttemptAt: new Date(Date.now() - MINUTE) })
      .where(eq(messages.id, id));
    await messageSweep.run(t.services, 0);
    const ended = await row();
    expect(ended.status).toBe('unknown');
    expect(ended.errorCode).toBe('outcome_unknown');
    expect(await attemptMessage(t.services, id, new Date(Date.now() + 10 * MINUTE))).toBe('skipped');
    expect(sentTo()).toHaveLength(0);
  });

  test('the sweep wakes a queued message whose wake-up was lost', async ({ t, peer }) => {
    peer.failNext('message', { status: 429, code: 20429, message: 'Too Many Requests' });
    const { id } = await send(t, peer);
    await t.services.db.system
      .update(messages)
      .set({ nextAttemptAt: new Date(Date.now() - 10 * MINUTE) })
      .where(eq(messages.id, id));
    expect(await messageSweep.run(t.services, MINUTE)).toBeGreaterThanOrEqual(1);
  });
});
