// The test kit of tools/calls (test/README.md "Test kits"): calls are written by the provider's
// hooks only, so the victim is a row inserted directly; and `callsTest`, a file whose context reaches
// the Twilio peer and whose peer delivers its inbound calls and status callbacks to the app itself.
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { calls } from '../../tools/calls/tables.ts';
import { phoneNumbers } from '../../tools/phone-numbers/tables.ts';
import { createTestContext, type TestContext, type TestOrg } from '../fixtures/context.ts';
import { type FileTestSetup, fileTest } from '../fixtures/file-test.ts';
import { defineKit } from '../fixtures/kit.ts';
import { freshNumber } from '../phone-numbers/kit.ts';
import { type Deliver, startTwilioPeer } from '../support/twilio-peer.ts';
import { AGENT_BODY } from '../voice-agents/kit.ts';

export const kit = defineKit({
  area: 'calls',
  bodies: {
    start_call_monitor: {
      body: { call_sid: `CA${'0'.repeat(32)}`, mode: 'listen', supervisor_phone: '+15557770001' },
      text: 'call_sid',
    },
    stop_call_monitor: {
      body: { participant_call_sid: `CA${'0'.repeat(32)}` },
      text: 'participant_call_sid',
    },
  },
  victims: {
    '/calls': async ({ t, org }) => {
      const id = newId();
      const phoneNumberId = newId();
      const number = freshNumber();
      await t.services.db.system.insert(phoneNumbers).values({ id: phoneNumberId, orgId: org.orgId, number });
      await t.services.db.system.insert(calls).values({
        id,
        orgId: org.orgId,
        callSid: `CA${id}${'0'.repeat(8)}`,
        direction: 'inbound',
        fromNumber: '+15550009999',
        toNumber: number,
        phoneNumberId,
        answeredBy: 'nobody',
        status: 'ringing',
        statusRank: 2,
        startedAt: new Date(),
      });
      return { id, read: () => t.services.db.system.select().from(calls).where(eq(calls.id, id)) };
    },
  },
});

/**
 * A `test` with fileTest's fixtures plus `peer`, the Twilio peer the context calls; the peer's
 * inbound calls and status callbacks go to the context's app (`app.request` with the full URL the
 * peer signed), as Twilio would call PUBLIC_BASE_URL.
 */
export function callsTest(setup: FileTestSetup = {}) {
  const target: { t?: TestContext } = {};
  const deliver: Deliver = (url, init) => {
    if (!target.t) throw new Error('no context to deliver to');
    return Promise.resolve(target.t.app.request(url, init));
  };
  const test = fileTest(setup)
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the peer has none.
    .extend('peer', { scope: 'file' }, async ({}, { onCleanup }) => {
      const peer = await startTwilioPeer({ deliver });
      onCleanup(() => peer.close());
      return peer;
    });
  test.override('t', { scope: 'file' }, async ({ peer }, { onCleanup }) => {
    const t = await createTestContext({ ...setup.env, TWILIO_API_BASE_URL: peer.url }, setup.options);
    target.t = t;
    onCleanup(() => t.close());
    return t;
  });
  return test;
}

/** POST /voice-agents as `org`'s owner; answers the agent's id. */
export async function createAgent(
  t: TestContext,
  org: TestOrg,
  body: Partial<typeof AGENT_BODY> = {},
): Promise<string> {
  const res = await t.request('POST', '/api/v1/voice-agents', {
    token: org.token,
    body: { ...AGENT_BODY, ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const json = (await res.json()) as { voice_agent: { _id: string } };
  return json.voice_agent._id;
}

/** POST /phone-numbers as `org`'s owner with a fresh number; answers its id and number. */
export async function createNumber(
  t: TestContext,
  org: TestOrg,
  body: { default_voice_agent_id?: string; forward_to?: string } = {},
): Promise<{ id: string; number: string }> {
  const number = freshNumber();
  const res = await t.request('POST', '/api/v1/phone-numbers', {
    token: org.token,
    body: { number, ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const json = (await res.json()) as { phone_number: { _id: string } };
  return { id: json.phone_number._id, number };
}
