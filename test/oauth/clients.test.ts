// Locks in how clients identify themselves: Client ID Metadata Documents (fetched, checked, size-limited,
// cached, refused on a private address without OAUTH_CLIENT_METADATA_ALLOW_PRIVATE) and dynamic client
// registration (public and confidential clients, redirect URI rules, the per-address budget, the cleanup
// of registrations never used).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { cleanupOauth } from '../../tools/oauth/jobs.ts';
import { oauthClients } from '../../tools/oauth/tables.ts';
import {
  createTestContext,
  FIXTURE_PASSWORD,
  fileTest,
  readJson,
  readOutput,
  type TestContext,
  TOOL,
} from '../fixtures/index.ts';
import { authorizeThroughForms, authorizeUrl, Browser, type Fetch, pkce, tokenRequest } from './browser.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';

interface DocServer {
  url(path: string): string;
  /** Requests served per path. */
  hits: Map<string, number>;
  /** The body and headers served at a path. */
  serve(path: string, body: string, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

async function startDocServer(): Promise<DocServer> {
  const routes = new Map<string, { body: string; headers: Record<string, string> }>();
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', ...route.headers }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    hits,
    serve: (path, body, headers = {}) => routes.set(path, { body, headers }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const test = fileTest({
  env: { OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: 'true' },
  options: { withoutRateLimits: true },
})
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the server has none.
  .extend('docs', { scope: 'file' }, async ({}, { onCleanup }) => {
    const docs = await startDocServer();
    onCleanup(() => docs.close());
    return docs;
  });

const tokenBody = z.looseObject({
  access_token: z.string().regex(/^[0-9a-f]{64}$/),
  refresh_token: z.string(),
});
const oauthError = z.object({ error: z.string(), error_description: z.string() });
const registered = z.looseObject({
  client_id: z.string(),
  client_secret: z.string().optional(),
  token_endpoint_auth_method: z.string(),
  redirect_uris: z.array(z.string()),
});

function fetchOf(t: TestContext): Fetch {
  return async (url, init) => t.app.request(url, init);
}

function register(t: TestContext, body: unknown): Promise<Response> {
  return Promise.resolve(
    t.app.request('/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}

/** Authorizes `clientId` as the owner through the forms and redeems the code as a public client. */
async function connectPublicClient(t: TestContext, email: string, clientId: string) {
  const origin = t.config.publicBaseUrl;
  const { verifier, challenge } = pkce();
  const browser = new Browser(fetchOf(t), origin);
  const start = await browser.get(authorizeUrl(origin, { clientId, redirectUri: REDIRECT, challenge }));
  const page = await start.clone().text();
  const back = await authorizeThroughForms(
    browser,
    authorizeUrl(origin, { clientId, redirectUri: REDIRECT, challenge }),
    { email, password: FIXTURE_PASSWORD },
  );
  expect(back.status, await back.clone().text()).toBe(302);
  const code = new URL(back.headers.get('location') ?? '').searchParams.get('code') ?? '';
  const res = await tokenRequest(fetchOf(t), `${origin}/oauth/token`, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: clientId,
  });
  return { page, res };
}

describe('Client ID Metadata Documents', () => {
  test('a document naming its own URL identifies the client; the consent names the URL; the copy is cached', async ({
    t,
    org,
    docs,
  }) => {
    const clientId = docs.url('/good/client.json');
    docs.serve(
      '/good/client.json',
      JSON.stringify({ client_id: clientId, client_name: 'Doc Client', redirect_uris: [REDIRECT] }),
      { 'cache-control': 'max-age=600' },
    );
    const { page, res } = await connectPublicClient(t, org.ownerEmail, clientId);
    expect(page).toContain('Doc Client');
    expect(page).toContain(`metadata document at ${clientId}`);
    expect(res.status).toBe(200);
    await readJson(res, tokenBody);
    expect(docs.hits.get('/good/client.json')).toBe(1);
  });

  test('a document naming another client_id, too large, or missing is refused with a page', async ({
    t,
    docs,
  }) => {
    const origin = t.config.publicBaseUrl;
    const other = docs.url('/other/client.json');
    docs.serve(
      '/other/client.json',
      JSON.stringify({ client_id: 'https://elsewhere.example/c', redirect_uris: [REDIRECT] }),
    );
    const big = docs.url('/big/client.json');
    docs.serve(
      '/big/client.json',
      JSON.stringify({
        client_id: big,
        redirect_uris: [REDIRECT],
        client_name: 'x'.repeat(100),
        pad: 'y'.repeat(6000),
      }),
    );
    for (const [clientId, message] of [
      [other, 'names another client_id'],
      [big, 'larger than 5 KB'],
      [docs.url('/missing/client.json'), 'HTTP 404'],
    ] as const) {
      const res = await t.app.request(
        authorizeUrl(origin, { clientId, redirectUri: REDIRECT, challenge: pkce().challenge }),
      );
      expect(res.status, clientId).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain(message);
    }
  });

  test('without OAUTH_CLIENT_METADATA_ALLOW_PRIVATE a document on a private address is never fetched', async ({
    docs,
  }) => {
    const strict = await createTestContext();
    try {
      const clientId = docs.url('/private/client.json').replace('http:', 'https:');
      docs.serve('/private/client.json', JSON.stringify({ client_id: clientId, redirect_uris: [REDIRECT] }));
      const res = await strict.app.request(
        authorizeUrl(strict.config.publicBaseUrl, {
          clientId,
          redirectUri: REDIRECT,
          challenge: pkce().challenge,
        }),
      );
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('could not be fetched from an allowed address');
      const plain = docs.url('/private/client.json');
      const http = await strict.app.request(
        authorizeUrl(strict.config.publicBaseUrl, {
          clientId: plain,
          redirectUri: REDIRECT,
          challenge: pkce().challenge,
        }),
      );
      expect(await http.text()).toContain('must be served over https');
      expect(docs.hits.get('/private/client.json')).toBeUndefined();
    } finally {
      await strict.close();
    }
  });
});

describe('dynamic client registration', () => {
  test('a public client registers without a secret and completes the flow with PKCE alone', async ({
    t,
    org,
  }) => {
    const res = await register(t, {
      client_name: 'Registered Assistant',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
    });
    expect(res.status).toBe(201);
    const client = await readJson(res, registered);
    expect(client.client_secret).toBeUndefined();
    const { page, res: token } = await connectPublicClient(t, org.ownerEmail, client.client_id);
    expect(page).toContain('dynamic client registration');
    expect(token.status).toBe(200);
    // The registration belongs to no organization, yet the grant is listed with its name.
    const list = await readOutput(
      await t.request('GET', '/api/v1/oauth/installations', { token: org.token }),
      TOOL.list_oauth_installations,
    );
    expect(list.installations.find((i) => i.app.client_id === client.client_id)?.app).toEqual({
      client_id: client.client_id,
      name: 'Registered Assistant',
      source: 'dcr',
    });
  });

  test('a confidential client gets a secret and must present it', async ({ t, org }) => {
    const client = await readJson(await register(t, { redirect_uris: [REDIRECT] }), registered);
    expect(client.token_endpoint_auth_method).toBe('client_secret_basic');
    expect(client.client_secret).toMatch(/^ocs_/);
    const { res } = await connectPublicClient(t, org.ownerEmail, client.client_id);
    expect(res.status).toBe(401);
    expect((await readJson(res, oauthError)).error).toBe('invalid_client');
  });

  test('refuses redirect URIs that are neither https nor loopback http, and unknown scopes', async ({
    t,
  }) => {
    for (const uri of [
      'http://evil.example.test/cb',
      'javascript:alert(1)',
      'https://app.example.test/cb#frag',
    ]) {
      const res = await register(t, { redirect_uris: [uri], token_endpoint_auth_method: 'none' });
      expect(res.status, uri).toBe(400);
      expect((await readJson(res, oauthError)).error).toBe('invalid_redirect_uri');
    }
    const scope = await register(t, { redirect_uris: [REDIRECT], scope: 'read:everything' });
    expect((await readJson(scope, oauthError)).error).toBe('invalid_client_metadata');
  });

  test('the daily cleanup removes registrations never used within 24 hours and keeps used ones', async ({
    t,
    org,
  }) => {
    const unused = await readJson(
      await register(t, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
      registered,
    );
    const used = await readJson(
      await register(t, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
      registered,
    );
    await connectPublicClient(t, org.ownerEmail, used.client_id);
    const db = t.services.db.system;
    const old = new Date(Date.now() - 25 * 60 * 60 * 1000);
    for (const id of [unused.client_id, used.client_id]) {
      await db.update(oauthClients).set({ createdAt: old }).where(eq(oauthClients.clientId, id));
    }
    expect(await cleanupOauth(t.services)).toBeGreaterThanOrEqual(1);
    const left = async (id: string) =>
      (await db.select().from(oauthClients).where(eq(oauthClients.clientId, id))).length;
    expect(await left(unused.client_id)).toBe(0);
    expect(await left(used.client_id)).toBe(1);
  });

  test('anonymous registrations are limited per address', async () => {
    const limited = await createTestContext();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) {
        const res = await register(limited, {
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
        });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 20).every((s) => s === 201)).toBe(true);
      expect(statuses[20]).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
