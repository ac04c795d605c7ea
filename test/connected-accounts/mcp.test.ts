// Locks in the connected-account tools over MCP: listed in the email toolset with honest annotations (verify open-world and not read-only, delete destructive), and a model can connect, verify against a real SMTP peer and read an account without ever seeing the password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type TestOrg, TOOL } from '../fixtures/index.ts';
import { bearer, type Connection, ERAS, serveMcp } from '../mcp-clients.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

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

let t: TestContext;
let org: TestOrg;
let peer: SmtpPeer;
let server: { url: URL; stop: () => Promise<void> };
let mcp: Connection;

beforeAll(async () => {
  t = await createTestContext({}, { withoutRateLimits: true });
  org = await t.createOrg();
  peer = await startSmtpPeer({ auth: LOGIN });
  server = await serveMcp(t);
  const key = await t.createPat(org.orgId, org.ownerId, ['mcp:read', 'mcp:write']);
  const era = ERAS[ERAS.length - 1];
  if (!era) throw new Error('no MCP era');
  mcp = await era.connect(server.url, { ...bearer(key.token), 'x-mcp-toolsets': 'email' });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
  await peer?.close();
  await t?.close();
});

describe('connected accounts over MCP', () => {
  it('lists the tools in the email toolset with their annotations', async () => {
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

  it('connects, verifies against a real SMTP peer and reads the account, never showing the password', async () => {
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
