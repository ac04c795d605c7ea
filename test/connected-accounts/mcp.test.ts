// Locks in the connected-account tools over MCP: listed in the email toolset with honest annotations (verify open-world and not read-only, delete destructive), and a model can connect, verify against a real SMTP peer and read an account without ever seeing the password.
import { describe, expect } from 'vitest';
import { fileTest, TOOL } from '../fixtures/index.ts';
import { bearer, type Connection, ERAS, serveMcp } from '../mcp-clients.ts';
import { startSmtpPeer } from '../support/smtp-peer.ts';

const LOGIN = { username: 'model', password: 'mcp-smtp-password' };
const TOOLS = [
  'list_connected_accounts',
  'get_connected_account',
  'create_connected_account',
  'update_connected_account',
  'delete_connected_account',
  'verify_connected_account',
  'rotate_inbound_secret',
  'list_inbound_emails',
];

// The SMTP peer the model verifies against, an MCP server over the file's context and the model's
// connection to it (email toolset): vitest tears them down after the file's last test, dependents first.
const test = fileTest({ options: { withoutRateLimits: true } })
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the peer has none.
  .extend('peer', { scope: 'file' }, async ({}, { onCleanup }) => {
    const peer = await startSmtpPeer({ auth: LOGIN });
    onCleanup(() => peer.close());
    return peer;
  })
  .extend('server', { scope: 'file' }, async ({ t }, { onCleanup }) => {
    const server = await serveMcp(t);
    onCleanup(() => server.stop());
    return server;
  })
  .extend('mcp', { scope: 'file' }, async ({ t, org, server }, { onCleanup }) => {
    const key = await t.createPat(org.orgId, org.ownerId, ['mcp:read', 'mcp:write']);
    const era = ERAS[ERAS.length - 1];
    if (!era) throw new Error('no MCP era');
    const mcp: Connection = await era.connect(server.url, {
      ...bearer(key.token),
      'x-mcp-toolsets': 'email',
    });
    onCleanup(() => mcp.close());
    return mcp;
  });

describe('connected accounts over MCP', () => {
  test('lists the tools in the email toolset with their annotations', async ({ mcp }) => {
    const { tools } = await mcp.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of TOOLS) expect(byName.has(name), name).toBe(true);
    expect(byName.get('verify_connected_account')?.annotations).toMatchObject({
      readOnlyHint: false,
      openWorldHint: true,
      destructiveHint: false,
    });
    expect(byName.get('delete_connected_account')?.annotations).toMatchObject({ destructiveHint: true });
    expect(byName.get('list_connected_accounts')?.annotations).toMatchObject({
      readOnlyHint: true,
      openWorldHint: false,
    });
  });

  test('connects, verifies against a real SMTP peer and reads the account, never showing the password', async ({
    mcp,
    peer,
  }) => {
    const created = await mcp.callTool('create_connected_account', {
      email: 'model@example.com',
      smtp: { host: peer.host, port: peer.port, secure: false, require_tls: false, ...LOGIN },
    });
    expect(created.isError ?? false).toBe(false);
    const account = TOOL.create_connected_account.output.parse(created.structuredContent).connected_account;
    expect(account.status).toBe('unverified');
    const verified = await mcp.callTool('verify_connected_account', { id: account._id });
    expect(
      TOOL.verify_connected_account.output.parse(verified.structuredContent).connected_account.status,
    ).toBe('verified');
    expect(peer.logins).toEqual([LOGIN.username]);
    const got = await mcp.callTool('get_connected_account', { id: account._id });
    expect(JSON.stringify(got)).not.toContain(LOGIN.password);
    expect(JSON.stringify(created)).not.toContain(LOGIN.password);
  });
});
