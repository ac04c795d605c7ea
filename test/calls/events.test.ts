// Locks in that a completed call reaches a real HTTPS receiver as one signed call.completed delivery carrying its call activity, whatever duplicates and late statuses the provider sends.
import { expect } from 'vitest';
import { VOICE_HOOK_PATH, VOICE_STATUS_HOOK_PATH } from '../../tools/calls/hooks.ts';
import { hookUrl } from '../../tools/telephony/signature.ts';
import type { TestContext } from '../fixtures/context.ts';
import { decodeDelivery, startEventReceiver } from '../fixtures/events.ts';
import { harnessTest } from '../fixtures/harness-test.ts';
import { createContact } from '../fixtures/records.ts';
import { type Deliver, startTwilioPeer } from '../support/twilio-peer.ts';
import { connectTelephony } from '../telephony/kit.ts';
import { createNumber } from './kit.ts';

const SECRET = 'calls-events-secret-0123456789';

const test = harnessTest(async () => {
  const target: { t?: TestContext } = {};
  const deliver: Deliver = (url, init) => {
    if (!target.t) throw new Error('no context to deliver to');
    return Promise.resolve(target.t.app.request(url, init));
  };
  const peer = await startTwilioPeer({ deliver });
  const harness = await startEventReceiver({
    name: 'Calls',
    events: ['call.completed'],
    secret: SECRET,
    env: { TWILIO_API_BASE_URL: peer.url, PUBLIC_BASE_URL: 'https://crm.example.com' },
  }).catch(async (err: unknown) => {
    await peer.close();
    throw err;
  });
  target.t = harness.t;
  return {
    ...harness,
    peer,
    async close() {
      await harness.close();
      await peer.close();
    },
  };
});

test('one call.completed per call, signed, with the call activity', async ({ t, org, harness }) => {
  const { peer, receiver, path } = harness;
  await connectTelephony(t, org, peer);
  const { number } = await createNumber(t, org);
  const first = await createContact(t, org, { phones: [{ phone: '+15551230081' }] });
  const second = await createContact(t, org, { phones: [{ phone: '+15551230082' }] });
  const statusUrl = hookUrl(t.services, VOICE_STATUS_HOOK_PATH);
  const call = async (from: string) => {
    const params = peer.inboundCall(from, number);
    expect((await peer.sendInbound(hookUrl(t.services, VOICE_HOOK_PATH), params)).status).toBe(200);
    return String(params.CallSid);
  };
  const one = await call('+15551230081');
  await peer.sendStatuses(one, ['in-progress', 'completed', 'completed', 'ringing', 'completed'], {
    url: statusUrl,
    extra: { CallDuration: '33' },
  });
  // A second call afterwards: its delivery comes after any the first call's repeats could have made.
  const two = await call('+15551230082');
  await peer.sendStatuses(two, ['completed'], { url: statusUrl, extra: { CallDuration: '5' } });
  await receiver.waitForRequests(2, 20_000);
  const delivered = receiver.hits(path).map((hit) => decodeDelivery(hit, SECRET));
  expect(delivered.map((d) => [d.event, d.data.lead_id, d.data.duration_seconds])).toEqual([
    ['call.completed', first.lead_id, 33],
    ['call.completed', second.lead_id, 5],
  ]);
  expect(delivered[0]?.data).toMatchObject({ type: 'call', direction: 'inbound', outcome: 'connected' });
});
