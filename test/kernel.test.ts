// Locks in the invoke pipeline as seen through REST: authentication, errors and the get_me tool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, json, type TestContext, type TestOrg } from './helpers.ts';

let t: TestContext;
let org: TestOrg;

beforeAll(async () => {
  t = await createTestContext();
  org = await t.createOrg({ plan: 'starter' });
});
afterAll(() => t.close());

describe('get_me over REST', () => {
  it('returns the caller, organization and plan features for a session', async () => {
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

  it('answers 401 Authentication required without a bearer header', async () => {
    const res = await t.request('GET', '/api/v1/me');
    expect(res.status).toBe(401);
    expect(await json(res)).toMatchObject({ error: 'Authentication required' });
  });

  it('echoes X-Request-Id and answers unknown routes with the 404 envelope', async () => {
    const res = await t.request('GET', '/api/v1/nope', { headers: { 'x-request-id': 'abc-123' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    expect(await json(res)).toMatchObject({ error: 'Not found', code: 'route_not_found' });
  });
});
