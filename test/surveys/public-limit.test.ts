// Locks in that the public survey form is under the per-IP public limit: 60 requests a minute on /s/{token} and its responses together, the 61st a 429 with Retry-After, another address unaffected.
import { describe, expect } from 'vitest';
import { fileTest } from '../fixtures/index.ts';
import { activeSurvey, respond, VALID_ANSWERS } from './helpers.ts';

const test = fileTest({ plan: 'pro', env: { TRUST_PROXY: '1' } });

describe('the per-IP public limit', () => {
  test('allows 60 requests a minute per IP on the form and its responses, the 61st is a 429', async ({
    t,
    org,
  }) => {
    const { path } = await activeSurvey(t, org);
    const ip = { 'x-forwarded-for': '203.0.113.91' };
    for (let i = 0; i < 30; i++) {
      expect((await t.request('GET', path, { headers: ip })).status).toBe(200);
      expect((await respond(t, path, { answers: VALID_ANSWERS }, ip)).status).toBe(201);
    }
    const refused = await respond(t, path, { answers: VALID_ANSWERS }, ip);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expect((await t.request('GET', path, { headers: { 'x-forwarded-for': '203.0.113.92' } })).status).toBe(
      200,
    );
  });
});
