// Locks in that the official MCP TypeScript client connects with nothing but the server's URL: it
// discovers the metadata from the 401, registers itself (RFC 7591), sends the person to the
// authorization page (scripted here by following its forms), redeems the code, lists the tools, and
// refreshes its token when the access token stops working.
import { createServer } from 'node:net';
import { serve } from '@hono/node-server';
import {
  Client,
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { describe, expect } from 'vitest';
import { harnessTest } from '../fixtures/harness-test.ts';
import { createTestContext, FIXTURE_PASSWORD } from '../fixtures/index.ts';
import { authorizeThroughForms, Browser, tokenRequest } from './browser.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
  return address.port;
}

// The app served on a port known before it starts, so PUBLIC_BASE_URL (the issuer and the
// resource the metadata names) is the very origin the client connects to.
const test = harnessTest(async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const t = await createTestContext({ PUBLIC_BASE_URL: origin }, { withoutRateLimits: true });
  const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const org = await t.createOrg();
  return {
    t,
    org,
    origin,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await t.close();
    },
  };
});

type Saved = Parameters<OAuthClientProvider['saveClientInformation'] & {}>[0];
type Tokens = Parameters<OAuthClientProvider['saveTokens']>[0];
type Discovery = Parameters<NonNullable<OAuthClientProvider['saveDiscoveryState']>>[0];

/** An in-memory client provider whose "browser" is a URL the test then follows. */
class ScriptedProvider implements OAuthClientProvider {
  client: Saved | undefined;
  saved: Tokens | undefined;
  verifier = '';
  discovery: Discovery | undefined;
  authorizationUrl: URL | undefined;

  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'SDK Test Client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: Saved) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: Tokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: Discovery) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

const clientInfo = { name: 'crm-oauth-test', version: '1.0.0' };

describe('the official MCP client with OAuth', () => {
  test('connects with nothing but the URL, lists tools on both protocol eras, and refreshes a revoked access token', async ({
    org,
    harness,
  }) => {
    const url = new URL(`${harness.origin}/mcp`);
    const provider = new ScriptedProvider();
    const first = new Client(clientInfo);
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toMatch(/^oc_/);
    const authorizationUrl = provider.authorizationUrl;
    if (!authorizationUrl) throw new Error('the client did not send the person to the authorization page');
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${harness.origin}/mcp`);

    const back = await authorizeThroughForms(new Browser(fetch, harness.origin), authorizationUrl.href, {
      email: org.ownerEmail,
      password: FIXTURE_PASSWORD,
    });
    expect(back.status).toBe(302);
    const callback = new URL(back.headers.get('location') ?? '');
    expect(callback.searchParams.get('iss')).toBe(harness.origin);
    await transport.finishAuth(callback.searchParams);
    expect(provider.saved?.access_token).toMatch(/^[0-9a-f]{64}$/);

    // Both protocol eras, with the same token.
    for (const [mode, version] of [
      ['legacy', /^2025-/],
      [{ pin: '2026-07-28' }, /^2026-07-28$/],
    ] as const) {
      const era = new Client(clientInfo, { versionNegotiation: { mode } });
      await era.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
      expect(era.getNegotiatedProtocolVersion()).toMatch(version);
      const tools = await era.listTools();
      expect(tools.tools.map((tool) => tool.name)).toContain('get_me');
      await era.close();
    }

    const client = new Client(clientInfo);
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));

    // The access token is revoked: the next call gets 401, and the client refreshes and retries.
    const revoked = provider.saved?.access_token ?? '';
    const revoke = await tokenRequest(fetch, `${harness.origin}/oauth/revoke`, {
      token: revoked,
      client_id: provider.client?.client_id ?? '',
    });
    expect(revoke.status).toBe(200);
    const again = await client.callTool({ name: 'get_me', arguments: {} });
    expect(again.isError).toBeFalsy();
    expect(provider.saved?.access_token).toMatch(/^[0-9a-f]{64}$/);
    expect(provider.saved?.access_token).not.toBe(revoked);
    await client.close();
  });
});
