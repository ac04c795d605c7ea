// Locks in the OAuth 2.1 code flow driven through the authorization page's own forms (sign-in,
// consent), the token endpoint and the tokens on /mcp and /api/v1, with its refusals: wrong
// verifier, reused code, mismatched or extra redirect URI, expired code, open redirects, scope
// escalation, another organization, the wrong resource, refresh reuse, revocation, installations.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { hashToken } from '../../core/auth/tokens.ts';
import { oauthTokens } from '../../core/db/schema.ts';
import { oauthCodes } from '../../tools/oauth/tables.ts';
import {
  createLead,
  FIXTURE_PASSWORD,
  fileTest,
  readJson,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import {
  type AuthorizeRequest,
  authorizeThroughForms,
  authorizeUrl,
  Browser,
  type Fetch,
  formOf,
  pkce,
  tokenRequest,
} from './browser.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

const REDIRECT = 'https://app.example.test/callback';

const tokenBody = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().positive(),
  refresh_token: z.string(),
  scope: z.string(),
});
const oauthError = z.object({ error: z.string(), error_description: z.string() });

function fetchOf(t: TestContext): Fetch {
  return async (url, init) => t.app.request(url, init);
}

interface App {
  clientId: string;
  secret: string;
}

async function registerApp(
  t: TestContext,
  org: TestOrg,
  scopes: string[],
  redirect = REDIRECT,
): Promise<App> {
  const res = await t.request('POST', '/api/v1/oauth/apps', {
    token: org.token,
    body: { name: 'Helper App', redirect_uris: [redirect], scopes },
  });
  const out = await readOutput(res, TOOL.create_oauth_app, 201);
  return { clientId: out.client_id, secret: out.client_secret };
}

const basic = (app: App) => ({
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.secret)}`).toString('base64')}`,
});

/** Runs the forms as the organization's owner and answers the code (with the redirect's parameters). */
async function codeFor(
  t: TestContext,
  org: TestOrg,
  request: AuthorizeRequest,
  options: Parameters<typeof authorizeThroughForms>[3] = {},
): Promise<URL> {
  const origin = t.config.publicBaseUrl;
  const res = await authorizeThroughForms(
    new Browser(fetchOf(t), origin),
    authorizeUrl(origin, request),
    { email: org.ownerEmail, password: FIXTURE_PASSWORD },
    options,
  );
  expect(res.status, await res.clone().text()).toBe(302);
  return new URL(res.headers.get('location') ?? '');
}

async function exchange(t: TestContext, app: App, code: string, verifier: string, redirect = REDIRECT) {
  return tokenRequest(
    fetchOf(t),
    `${t.config.publicBaseUrl}/oauth/token`,
    { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirect },
    basic(app),
  );
}

/** A full grant for `resource` ('mcp' or absent: the API), answering the token response. */
async function grant(t: TestContext, org: TestOrg, app: App, scope: string, resource?: string) {
  const { verifier, challenge } = pkce();
  const back = await codeFor(t, org, {
    clientId: app.clientId,
    redirectUri: REDIRECT,
    challenge,
    scope,
    ...(resource !== undefined && { resource }),
  });
  const res = await exchange(t, app, back.searchParams.get('code') ?? '', verifier);
  return readJson(res, tokenBody);
}

const mcpCall = (t: TestContext, token: string) =>
  t.request('POST', '/mcp', {
    token,
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } },
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
  });

describe('discovery', () => {
  test('publishes the protected resource and authorization server metadata', async ({ t }) => {
    const base = t.config.publicBaseUrl;
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const res = await t.app.request(path);
      expect(res.status, path).toBe(200);
      expect(await res.json(), path).toMatchObject({
        resource: `${base}/mcp`,
        authorization_servers: [base],
        scopes_supported: ['mcp:read', 'mcp:write'],
        bearer_methods_supported: ['header'],
      });
    }
    const api = await (await t.app.request('/.well-known/oauth-protected-resource/api/v1')).json();
    expect(api).toMatchObject({ resource: `${base}/api/v1` });
    const as = await (await t.app.request('/.well-known/oauth-authorization-server')).json();
    expect(as).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    expect(as.scopes_supported).toContain('read:leads');
  });
});

describe('the code flow through the forms', () => {
  test('issues a code with state and iss, then a 64-hex token that works on /mcp and not on /api/v1', async ({
    t,
    org,
  }) => {
    const app = await registerApp(t, org, ['mcp:read', 'mcp:write', 'read:leads']);
    const { verifier, challenge } = pkce();
    const back = await codeFor(t, org, {
      clientId: app.clientId,
      redirectUri: REDIRECT,
      challenge,
      state: 'st-123',
      scope: 'mcp:read mcp:write',
      resource: `${t.config.publicBaseUrl}/mcp`,
    });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('iss')).toBe(t.config.publicBaseUrl);
    const res = await exchange(t, app, back.searchParams.get('code') ?? '', verifier);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const tokens = await readJson(res, tokenBody);
    expect(tokens.access_token).toMatch(/^[0-9a-f]{64}$/);
    expect(tokens.scope).toBe('mcp:read mcp:write');
    const [row] = await t.services.db.system
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(tokens.access_token)));
    expect(row).toMatchObject({ resource: 'mcp', scopes: ['mcp:read', 'mcp:write'], userId: org.ownerId });

    const mcp = await mcpCall(t, tokens.access_token);
    expect(mcp.status).toBe(200);
    expect(await mcp.text()).toContain(org.orgId);

    const rest = await t.request('GET', '/api/v1/leads', { token: tokens.access_token });
    expect(rest.status).toBe(401);
    expect(await rest.json()).toMatchObject({ code: 'invalid_token' });
  });

  test('a token asked without resource is for the API: it works on /api/v1 and is refused on /mcp', async ({
    t,
    org,
  }) => {
    const app = await registerApp(t, org, ['mcp:read', 'read:leads']);
    const tokens = await grant(t, org, app, 'read:leads mcp:read');
    expect((await t.request('GET', '/api/v1/leads', { token: tokens.access_token })).status).toBe(200);
    const mcp = await mcpCall(t, tokens.access_token);
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  test('a token without an MCP scope gets 403 insufficient_scope naming the scope on /mcp', async ({
    t,
    org,
  }) => {
    const app = await registerApp(t, org, ['read:leads']);
    const { verifier, challenge } = pkce();
    const back = await codeFor(t, org, {
      clientId: app.clientId,
      redirectUri: REDIRECT,
      challenge,
      scope: 'read:leads',
      resource: `${t.config.publicBaseUrl}/mcp`,
    });
    const tokens = await readJson(
      await exchange(t, app, back.searchParams.get('code') ?? '', verifier),
      tokenBody,
    );
    const res = await mcpCall(t, tokens.access_token);
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(
      /^Bearer error="insufficient_scope", scope="mcp:read"/,
    );
  });

  test('deny sends access_denied back with state and iss', async ({ t, org }) => {
    const app = await registerApp(t, org, ['mcp:read']);
    const back = await codeFor(
      t,
      org,
      { clientId: app.clientId, redirectUri: REDIRECT, challenge: pkce().challenge, state: 'abc' },
      { deny: true },
    );
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('abc');
    expect(back.searchParams.get('iss')).toBe(t.config.publicBaseUrl);
    expect(back.searchParams.get('code')).toBeNull();
  });

  test('the person narrows scopes and pins toolsets; a box the request did not ask for grants nothing', async ({
    t,
    org,
  }) => {
    const app = await registerApp(t, org, ['mcp:read', 'mcp:write']);
    const { verifier, challenge } = pkce();
    const back = await codeFor(
      t,
      org,
      {
        clientId: app.clientId,
        redirectUri: REDIRECT,
        challenge,
        scope: 'mcp:read mcp:write',
        resource: `${t.config.publicBaseUrl}/mcp`,
      },
      { changes: { 'scope:mcp:write': null, 'scope:write:leads': 'on', 'toolset:sales': 'on' } },
    );
    const tokens = await readJson(
      await exchange(t, app, back.searchParams.get('code') ?? '', verifier),
      tokenBody,
    );
    expect(tokens.scope).toBe('mcp:read');
    const [row] = await t.services.db.system
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(tokens.access_token)));
    expect(row?.scopes).toEqual(['mcp:read']);
    expect(row?.toolsets).toEqual(['core', 'sales']);

    // The pinned toolsets and the narrowed scope decide what the connection lists: a sales read tool
    // (not in the default toolsets), no webhooks tool (a toolset the grant did not pin), no write.
    const listed = await t.request('POST', '/mcp', {
      token: tokens.access_token,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    });
    expect(listed.status).toBe(200);
    const names = [...(await listed.text()).matchAll(/"name":"([a-z_]+)"/g)].map((match) => match[1]);
    expect(names).toContain('list_activities');
    expect(names).toContain('list_leads');
    expect(names).not.toContain('list_webhooks');
    expect(names).not.toContain('create_lead');
  });
});

describe('refusals at the authorization endpoint', () => {
  test('an unknown client or a redirect URI it did not register gets a page, never a redirect', async ({
    t,
    org,
  }) => {
    const app = await registerApp(t, org, ['mcp:read']);
    const origin = t.config.publicBaseUrl;
    const challenge = pkce().challenge;
    for (const request of [
      {
        clientId: 'oc_00000000000000000000000000000000',
        redirectUri: 'https://evil.example.test/',
        challenge,
      },
      { clientId: app.clientId, redirectUri: 'https://evil.example.test/callback', challenge },
      { clientId: app.clientId, redirectUri: `${REDIRECT}?extra=1`, challenge },
      { clientId: app.clientId, redirectUri: `${REDIRECT}/`, challenge },
    ]) {
      const res = await t.app.request(authorizeUrl(origin, request));
      expect(res.status, request.redirectUri).toBe(400);
      expect(res.headers.get('location'), request.redirectUri).toBeNull();
      expect(await res.text()).toContain('Authorization failed');
    }
  });

  test('errors after a trusted redirect URI go back to it: no code flow, no S256, scope beyond the app, bad resource', async ({
    t,
    org,
  }) => {
    const app = await registerApp(t, org, ['mcp:read']);
    const origin = t.config.publicBaseUrl;
    const base = { clientId: app.clientId, redirectUri: REDIRECT, challenge: pkce().challenge, state: 's' };
    const cases: [Record<string, string>, string][] = [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ scope: 'mcp:write' }, 'invalid_scope'],
      [{ scope: 'read:everything' }, 'invalid_scope'],
      [{ resource: 'https://elsewhere.example.test/mcp' }, 'invalid_target'],
    ];
    for (const [extra, error] of cases) {
      const res = await t.app.request(authorizeUrl(origin, base, extra));
      expect(res.status, error).toBe(302);
      const location = new URL(res.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(location.searchParams.get('error'), JSON.stringify(extra)).toBe(error);
      expect(location.searchParams.get('state')).toBe('s');
      expect(location.searchParams.get('iss')).toBe(origin);
    }
  });

  test("another organization's member cannot authorize an organization's app", async ({ t, org, other }) => {
    const app = await registerApp(t, org, ['mcp:read']);
    const origin = t.config.publicBaseUrl;
    const res = await authorizeThroughForms(
      new Browser(fetchOf(t), origin),
      authorizeUrl(origin, { clientId: app.clientId, redirectUri: REDIRECT, challenge: pkce().challenge }),
      { email: other.ownerEmail, password: FIXTURE_PASSWORD },
    );
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
  });

  test('a form posted without the browser cookie is refused (CSRF)', async ({ t, org }) => {
    const app = await registerApp(t, org, ['mcp:read']);
    const origin = t.config.publicBaseUrl;
    const url = authorizeUrl(origin, {
      clientId: app.clientId,
      redirectUri: REDIRECT,
      challenge: pkce().challenge,
    });
    const start = await t.app.request(url);
    const form = formOf(await start.text());
    const res = await new Browser(fetchOf(t), origin).submit(form, {
      email: org.ownerEmail,
      password: FIXTURE_PASSWORD,
    });
    expect(res.status).toBe(403);
  });

  test('a wrong password shows the sign-in form again', async ({ t, org }) => {
    const app = await registerApp(t, org, ['mcp:read']);
    const origin = t.config.publicBaseUrl;
    const browser = new Browser(fetchOf(t), origin);
    const start = await browser.get(
      authorizeUrl(origin, { clientId: app.clientId, redirectUri: REDIRECT, challenge: pkce().challenge }),
    );
    const res = await browser.submit(formOf(await start.text()), {
      email: org.ownerEmail,
      password: 'wrong',
    });
    expect(res.status).toBe(401);
    expect(await res.text()).toContain('The email or password is not right.');
  });
});

describe('refusals at the token endpoint', () => {
  test('a wrong verifier, another redirect URI, another client or a wrong secret is refused', async ({
    t,
    org,
  }) => {
    const app = await registerApp(t, org, ['mcp:read']);
    const { verifier, challenge } = pkce();
    const back = await codeFor(t, org, { clientId: app.clientId, redirectUri: REDIRECT, challenge });
    const code = back.searchParams.get('code') ?? '';
    const wrongVerifier = await exchange(t, app, code, pkce().verifier);
    expect(wrongVerifier.status).toBe(400);
    expect((await readJson(wrongVerifier, oauthError)).error).toBe('invalid_grant');
    const otherRedirect = await exchange(t, app, code, verifier, 'https://app.example.test/other');
    expect((await readJson(otherRedirect, oauthError)).error).toBe('invalid_grant');
    const otherApp = await registerApp(t, org, ['mcp:read']);
    const otherClient = await exchange(t, otherApp, code, verifier);
    expect((await readJson(otherClient, oauthError)).error).toBe('invalid_grant');
    const wrongSecret = await exchange(t, { ...app, secret: 'ocs_wrong' }, code, verifier);
    expect(wrongSecret.status).toBe(401);
    expect((await readJson(wrongSecret, oauthError)).error).toBe('invalid_client');
    // None of these spent the code.
    expect((await exchange(t, app, code, verifier)).status).toBe(200);
  });

  test('a reused code is refused and revokes the tokens it issued', async ({ t, org }) => {
    const app = await registerApp(t, org, ['read:leads']);
    const { verifier, challenge } = pkce();
    const back = await codeFor(t, org, {
      clientId: app.clientId,
      redirectUri: REDIRECT,
      challenge,
      scope: 'read:leads',
    });
    const code = back.searchParams.get('code') ?? '';
    const tokens = await readJson(await exchange(t, app, code, verifier), tokenBody);
    expect((await t.request('GET', '/api/v1/leads', { token: tokens.access_token })).status).toBe(200);
    const again = await exchange(t, app, code, verifier);
    expect((await readJson(again, oauthError)).error).toBe('invalid_grant');
    expect((await t.request('GET', '/api/v1/leads', { token: tokens.access_token })).status).toBe(401);
  });

  test('an expired code is refused', async ({ t, org }) => {
    const app = await registerApp(t, org, ['mcp:read']);
    const { verifier, challenge } = pkce();
    const back = await codeFor(t, org, { clientId: app.clientId, redirectUri: REDIRECT, challenge });
    const code = back.searchParams.get('code') ?? '';
    await t.services.db.system
      .update(oauthCodes)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oauthCodes.codeHash, hashToken(code)));
    expect((await readJson(await exchange(t, app, code, verifier), oauthError)).error).toBe('invalid_grant');
  });

  test('refresh rotates; reusing a rotated refresh token revokes the whole family', async ({ t, org }) => {
    const app = await registerApp(t, org, ['read:leads', 'write:leads']);
    const first = await grant(t, org, app, 'read:leads');
    const url = `${t.config.publicBaseUrl}/oauth/token`;
    const refresh = (token: string, extra: Record<string, string> = {}) =>
      tokenRequest(
        fetchOf(t),
        url,
        { grant_type: 'refresh_token', refresh_token: token, ...extra },
        basic(app),
      );
    const escalate = await refresh(first.refresh_token, { scope: 'read:leads write:leads' });
    expect((await readJson(escalate, oauthError)).error).toBe('invalid_scope');
    const second = await readJson(await refresh(first.refresh_token), tokenBody);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await t.request('GET', '/api/v1/leads', { token: second.access_token })).status).toBe(200);
    const reuse = await refresh(first.refresh_token);
    expect((await readJson(reuse, oauthError)).error).toBe('invalid_grant');
    expect((await t.request('GET', '/api/v1/leads', { token: second.access_token })).status).toBe(401);
    expect((await t.request('GET', '/api/v1/leads', { token: first.access_token })).status).toBe(401);
    expect((await readJson(await refresh(second.refresh_token), oauthError)).error).toBe('invalid_grant');
  });

  test('revocation answers 200 and the token stops working at once', async ({ t, org }) => {
    const app = await registerApp(t, org, ['read:leads']);
    const tokens = await grant(t, org, app, 'read:leads');
    const url = `${t.config.publicBaseUrl}/oauth/revoke`;
    expect((await t.request('GET', '/api/v1/leads', { token: tokens.access_token })).status).toBe(200);
    const res = await tokenRequest(fetchOf(t), url, { token: tokens.access_token }, basic(app));
    expect(res.status).toBe(200);
    expect((await t.request('GET', '/api/v1/leads', { token: tokens.access_token })).status).toBe(401);
    const unknown = await tokenRequest(fetchOf(t), url, { token: 'f'.repeat(64) }, basic(app));
    expect(unknown.status).toBe(200);
  });

  test("a token sees only its organization's records", async ({ t, org, other }) => {
    const lead = await createLead(t, other);
    const app = await registerApp(t, org, ['read:leads']);
    const tokens = await grant(t, org, app, 'read:leads');
    const res = await t.request('GET', `/api/v1/leads/${lead._id}`, { token: tokens.access_token });
    expect(res.status).toBe(404);
  });
});

describe('the holder', () => {
  test("a deactivated user's token stops at once, and its refresh is refused", async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const app = await registerApp(t, org, ['read:leads']);
    const { verifier, challenge } = pkce();
    const back = await codeFor(
      t,
      { ...org, ownerEmail: member.email },
      { clientId: app.clientId, redirectUri: REDIRECT, challenge, scope: 'read:leads' },
    );
    const tokens = await readJson(
      await exchange(t, app, back.searchParams.get('code') ?? '', verifier),
      tokenBody,
    );
    expect((await t.request('GET', '/api/v1/leads', { token: tokens.access_token })).status).toBe(200);
    const off = await t.request('POST', `/api/v1/users/${member.userId}/deactivate`, { token: org.token });
    expect(off.status).toBe(200);
    expect((await t.request('GET', '/api/v1/leads', { token: tokens.access_token })).status).toBe(401);
    const refresh = await tokenRequest(
      fetchOf(t),
      `${t.config.publicBaseUrl}/oauth/token`,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(app),
    );
    expect((await readJson(refresh, oauthError)).error).toBe('invalid_grant');
  });
});

describe('installations', () => {
  test('one per app and person; deleting it revokes every token of it', async ({ t, org }) => {
    const app = await registerApp(t, org, ['read:leads']);
    const first = await grant(t, org, app, 'read:leads');
    const second = await grant(t, org, app, 'read:leads');
    const list = await readOutput(
      await t.request('GET', '/api/v1/oauth/installations', { token: org.token }),
      TOOL.list_oauth_installations,
    );
    const mine = list.installations.filter((i) => i.app.client_id === app.clientId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ user_id: org.ownerId, scopes: ['read:leads'], app: { source: 'app' } });
    const del = await t.request('DELETE', `/api/v1/oauth/installations/${mine[0]?._id}`, {
      token: org.token,
    });
    expect(del.status).toBe(200);
    for (const token of [first.access_token, second.access_token]) {
      expect((await t.request('GET', '/api/v1/leads', { token })).status).toBe(401);
    }
    const refresh = await tokenRequest(
      fetchOf(t),
      `${t.config.publicBaseUrl}/oauth/token`,
      { grant_type: 'refresh_token', refresh_token: second.refresh_token },
      basic(app),
    );
    expect((await readJson(refresh, oauthError)).error).toBe('invalid_grant');
  });

  test('a member sees only their own installations and cannot delete apps', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const list = await t.request('GET', '/api/v1/oauth/installations', { token: member.token });
    expect(list.status).toBe(200);
    const out = await readOutput(list, TOOL.list_oauth_installations);
    expect(out.installations.every((i) => i.user_id === member.userId)).toBe(true);
    expect((await t.request('GET', '/api/v1/oauth/apps', { token: member.token })).status).toBe(403);
  });
});
