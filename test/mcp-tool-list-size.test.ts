// Locks in the size of what an MCP connection costs a model: the default tools/list at most 40 KB
// and every toolset together at most 250 KB (JSON bytes, owner session, enterprise plan), in both
// protocol eras, over real HTTP calls with the official clients.
import { afterAll, describe, expect } from 'vitest';
import { TOOLSETS_HEADER } from '../mcp/toolsets.ts';
import { fileTest } from './fixtures/file-test.ts';
import { bearer, type Connection, ERAS, serveMcpForFile } from './mcp-clients.ts';

const test = fileTest({ plan: 'enterprise' }).extend('mcpUrl', { scope: 'file' }, serveMcpForFile);

/** The budgets of issue 21, in bytes of the JSON tools/list result. */
const DEFAULT_LIST_BUDGET = 40_000;
const ALL_TOOLSETS_BUDGET = 250_000;

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe.each(ERAS)('tools/list size over $label', (era) => {
  const connections: Connection[] = [];
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
  });
  async function toolsOf(mcpUrl: URL, token: string, toolsets?: string) {
    const headers = { ...bearer(token), ...(toolsets === undefined ? {} : { [TOOLSETS_HEADER]: toolsets }) };
    const connection = await era.connect(mcpUrl, headers);
    connections.push(connection);
    return (await connection.listTools()).tools;
  }

  test(`keeps the default list within ${DEFAULT_LIST_BUDGET} bytes and all toolsets within ${ALL_TOOLSETS_BUDGET}`, async ({
    org,
    mcpUrl,
  }) => {
    const defaults = await toolsOf(mcpUrl, org.token);
    const all = await toolsOf(mcpUrl, org.token, 'all');
    // The owner sees every tool of the selection, so these are the largest lists there are.
    expect(defaults.length).toBeGreaterThan(30);
    expect(all.length).toBeGreaterThan(defaults.length);
    expect(bytesOf({ tools: defaults })).toBeLessThanOrEqual(DEFAULT_LIST_BUDGET);
    expect(bytesOf({ tools: all })).toBeLessThanOrEqual(ALL_TOOLSETS_BUDGET);
  });

  test('still gives every tool a title, a description, its input fields and an output schema', async ({
    org,
    mcpUrl,
  }) => {
    const tools = await toolsOf(mcpUrl, org.token, 'all');
    const createLead = tools.find((tool) => tool.name === 'create_lead');
    expect(createLead?.inputSchema).toMatchObject({
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', description: expect.any(String) } },
    });
    expect(createLead?.outputSchema).toMatchObject({
      type: 'object',
      properties: { lead: { type: 'object' } },
    });
    const listLeads = tools.find((tool) => tool.name === 'list_leads');
    expect(listLeads?.outputSchema).toMatchObject({
      properties: { leads: { type: 'array', items: { type: 'object' } }, totalPages: { type: 'integer' } },
    });
    for (const tool of tools) {
      // The title is the tool's own; annotations no longer repeat it.
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.annotations?.title, tool.name).toBeUndefined();
      expect(JSON.stringify(tool.inputSchema), tool.name).not.toContain('9007199254740991');
    }
  });
});
