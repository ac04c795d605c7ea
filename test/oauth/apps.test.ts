// Locks in the organization's OAuth apps over REST: owners and admins only, redirect URI and scope rules,
// the secret shown once and stored hashed, changes, and deletion revoking every token the app holds.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { oauthClients } from '../../tools/oauth/tables.ts';
import {
  FIXTURE_PASSWORD,
  fileTest,
  readError,
  readJson,
  readOutput,
  type TestContext,
  TOOL,
} from '../fixtures/index.ts';
import { authorizeThroughForms, authorizeUrl, Browser, pkce, tokenRequest } from './browser.ts';

const test = fileTest({ options: { withoutRateLimits: true } });
const REDIRECT = 'https://app.example.test/cb';

const fetchOf = (t: TestContext) => async (url: string, init?: RequestInit) => t.app.request(url, init);

describe('OAuth apps', () => {
  test('creates an app whose secret is shown once and stored only as its hash', async ({ t, org }) => {
    const res = await t.request('POST', '/api/v1/oauth/apps', {
      token: org.token,
      body: {
        name: 'Zapier-ish',
        redirect_uris: [REDIRECT, 'http://127.0.0.1:8123/cb'],
        scopes: ['mcp:read'],
      },
    });
    const out = await readOutput(res, TOOL.create_oauth_app, 201);
    expect(out.client_id).toMatch(/^oc_[0-9a-f]{32}$/);
    expect(out.client_secret).toMatch(/^ocs_[0-9a-f]{64}$/);
    const [row] = await t.services.db.system
      .select()
      .from(oauthClients)
      .where(eq(oauthClients.id, out.app._id));
    expect(row?.secretHash).toBe(createHash('sha256').update(out.client_secret).digest('hex'));
    const listed = await readOutput(
      await t.request('GET', '/api/v1/oauth/apps', { token: org.token }),
      TOOL.list_oauth_apps,
    );
    expect(listed.apps.map((a) => a.client_id)).toContain(out.client_id);
    expect(JSON.stringify(listed)).not.toContain(out.client_secret);
    const got = await readOutput(
      await t.request('GET', `/api/v1/oauth/apps/${out.app._id}`, { token: org.token }),
      TOOL.get_oauth_app,
    );
    expect(got.app).toEqual(out.app);
  });

  test('refuses redirect URIs that are not https or loopback http, and scopes the server does not know', async ({
    t,
    org,
  }) => {
    for (const body of [
      { name: 'A', redirect_uris: ['http://app.example.test/cb'], scopes: ['mcp:read'] },
      { name: 'A', redirect_uris: ['https://app.example.test/cb#x'], scopes: ['mcp:read'] },
      { name: 'A', redirect_uris: [], scopes: ['mcp:read'] },
      { name: 'A', redirect_uris: [REDIRECT], scopes: ['read:everything'] },
    ]) {
      const res = await t.request('POST', '/api/v1/oauth/apps', { token: org.token, body });
      const error = await readError(res, 400);
      expect(error.code).toBe('validation_failed');
    }
  });

  test('members cannot manage apps', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const res = await t.request('POST', '/api/v1/oauth/apps', {
      token: member.token,
      body: { name: 'A', redirect_uris: [REDIRECT], scopes: ['mcp:read'] },
    });
    expect(res.status).toBe(403);
  });

  test('updates name and redirect URIs; deleting the app revokes its tokens and forgets it', async ({
    t,
    org,
  }) => {
    const created = await readOutput(
      await t.request('POST', '/api/v1/oauth/apps', {
        token: org.token,
        body: { name: 'Old', redirect_uris: [REDIRECT], scopes: ['read:leads'] },
      }),
      TOOL.create_oauth_app,
      201,
    );
    const updated = await readOutput(
      await t.request('PATCH', `/api/v1/oauth/apps/${created.app._id}`, {
        token: org.token,
        body: { name: 'New', redirect_uris: [REDIRECT, 'https://app.example.test/other'] },
      }),
      TOOL.update_oauth_app,
    );
    expect(updated.app).toMatchObject({ name: 'New', scopes: ['read:leads'] });

    const origin = t.config.publicBaseUrl;
    const { verifier, challenge } = pkce();
    const back = await authorizeThroughForms(
      new Browser(fetchOf(t), origin),
      authorizeUrl(origin, {
        clientId: created.client_id,
        redirectUri: REDIRECT,
        challenge,
        scope: 'read:leads',
      }),
      { email: org.ownerEmail, password: FIXTURE_PASSWORD },
    );
    const code = new URL(back.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const tokens = await readJson(
      await tokenRequest(fetchOf(t), `${origin}/oauth/token`, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: created.client_id,
        client_secret: created.client_secret,
      }),
      z.looseObject({ access_token: z.string() }),
    );
    expect((await t.request('GET', '/api/v1/leads', { token: tokens.access_token })).status).toBe(200);

    const del = await t.request('DELETE', `/api/v1/oauth/apps/${created.app._id}`, { token: org.token });
    expect(del.status).toBe(200);
    expect((await t.request('GET', '/api/v1/leads', { token: tokens.access_token })).status).toBe(401);
    expect(
      (await t.request('GET', `/api/v1/oauth/apps/${created.app._id}`, { token: org.token })).status,
    ).toBe(404);
  });

  test('the tools carry honest annotations', () => {
    expect(TOOL.delete_oauth_app.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(TOOL.delete_oauth_installation.annotations).toMatchObject({ destructiveHint: true });
    expect(TOOL.list_oauth_apps.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(TOOL.update_oauth_app.annotations).toMatchObject({ idempotentHint: true, destructiveHint: false });
    expect(TOOL.create_oauth_app.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: false });
  });
});
