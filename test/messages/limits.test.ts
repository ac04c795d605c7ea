// Locks in the per-user messaging limit of the send routes: 30 a minute per user, stacked on the per-IP limit, reported in the RateLimit-* headers, the 31st refused with 429 and the messaging sentence, another user unaffected.
import { describe, expect } from 'vitest';
import { readError } from '../fixtures/index.ts';
import { connectTelephony, telephonyTest } from '../telephony/kit.ts';
import { createNumber, leadWithPhone } from './kit.ts';

const test = telephonyTest();

describe('the messaging limit', () => {
  test('the 31st send of a user in a minute is 429; another user still sends', async ({ t, peer }) => {
    const org = await t.createOrg();
    await connectTelephony(t, org, peer);
    const from = await createNumber(t, org);
    const lead = await leadWithPhone(t, org);
    // Previews: each request counts, nothing is sent.
    const body = {
      lead_id: lead.leadId,
      to: lead.phone,
      from_phone_number_id: from.id,
      body: 'Hi',
      confirm: false,
    };
    const first = await t.request('POST', '/api/v1/sms', { token: org.token, body });
    expect(first.status).toBe(200);
    // The headers report the limit closest to exhaustion: here still the per-IP one.
    expect(first.headers.get('ratelimit-limit')).not.toBeNull();
    for (let n = 2; n <= 30; n++) {
      const path = n % 2 === 0 ? '/api/v1/sms' : '/api/v1/whatsapp';
      const res = await t.request('POST', path, {
        token: org.token,
        body: { ...body, template_sid: undefined },
      });
      expect(res.status, `send ${n}`).toBeLessThan(429);
    }
    const refused = await t.request('POST', '/api/v1/sms', { token: org.token, body });
    const error = await readError(refused, 429);
    expect(error.error).toBe('Too many messages sent, please try again later.');
    expect(refused.headers.get('ratelimit-limit')).toBe('30');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    // Reading is not limited by it.
    expect((await t.request('GET', '/api/v1/messages', { token: org.token })).status).toBe(200);
    // Per user: a colleague has a budget of their own.
    const colleague = await t.createUser(org.orgId, 'member');
    const theirs = await t.request('POST', '/api/v1/sms', { token: colleague.token, body });
    expect(theirs.status).toBe(200);
  });
});
