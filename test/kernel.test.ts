// Locks in the invoke pipeline as seen through REST: authentication, errors and the get_me tool.
import { describe, expect } from 'vitest';
import { fileTest } from './fixtures/file-test.ts';
import { json } from './helpers.ts';

const test = fileTest({ plan: 'starter' });

describe('get_me over REST', () => {
  test('returns the caller, organization and plan features for a session', async ({ t, org }) => {
    const res = await t.request('GET', '/api/v1/me', { token: org.token });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({
      organization: { _id: org.orgId, plan: 'starter' },
      user: { _id: org.ownerId, role: 'owner' },
      token_kind: 'session',
      scopes: null,
    });
    expect(body.features).toEqual(['webhooks', 'smart_views', 'task_snooze']);
  });

  test('answers 401 Authentication required without a bearer header', async ({ t }) => {
    const res = await t.request('GET', '/api/v1/me');
    expect(res.status).toBe(401);
    expect(await json(res)).toMatchObject({ error: 'Authentication required' });
  });

  test('echoes X-Request-Id and answers unknown routes with the 404 envelope', async ({ t }) => {
    const res = await t.request('GET', '/api/v1/nope', { headers: { 'x-request-id': 'abc-123' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    expect(await json(res)).toMatchObject({ error: 'Not found', code: 'route_not_found' });
  });
});

describe('REST request bodies', () => {
  test('answers malformed JSON with 400 invalid_json and writes nothing', async ({ t, org }) => {
    const res = await t.request('POST', '/api/v1/leads', { token: org.token, body: '{"name": "Acme",' });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ error: 'Malformed JSON body', code: 'invalid_json' });
    const list = await json<{ total: number }>(await t.request('GET', '/api/v1/leads', { token: org.token }));
    expect(list.total).toBe(0);
  });

  test('answers a JSON body that is not an object with 400 and details', async ({ t, org }) => {
    const res = await t.request('POST', '/api/v1/leads', { token: org.token, body: '[{"name":"Acme"}]' });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'validation_failed', details: [{ field: '(root)' }] });
  });

  test('answers a body that is not JSON with 415', async ({ t, org }) => {
    const res = await t.request('POST', '/api/v1/leads', {
      token: org.token,
      body: 'name=Acme',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect((await json(res)).code).toBe('unsupported_media_type');
  });

  test('answers a body over 1 MiB with 413 in the error envelope', async ({ t, org }) => {
    const big = JSON.stringify({ name: 'Big', description: 'x'.repeat(1024 * 1024) });
    const res = await t.request('POST', '/api/v1/leads', {
      token: org.token,
      body: big,
      headers: { 'content-length': String(Buffer.byteLength(big)) },
    });
    expect(res.status).toBe(413);
    expect(await json(res)).toMatchObject({ error: 'Request body too large', code: 'payload_too_large' });
  });

  test('accepts a body just under the cap', async ({ t, org }) => {
    const body = JSON.stringify({ name: 'Almost', notes: 'y'.repeat(1024 * 1024 - 100) });
    const res = await t.request('POST', '/api/v1/leads', { token: org.token, body });
    // The body is read; the 10,000-character description rule does not apply to custom properties.
    expect(res.status).toBe(201);
  });
});
