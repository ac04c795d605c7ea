// Locks in the telephony toolset over MCP: numbers and voice agents are listed only when `telephony` is selected, every tool is closed-world with honest hints, and an assistant creates an agent and a number, sets and clears the default agent, and meets the same 400 for a paused agent as REST callers.
import { describe, expect } from 'vitest';
import { fileTest } from '../fixtures/file-test.ts';
import { TOOL } from '../fixtures/index.ts';
import { bearer, ERAS, envelopeOf, serveMcpForFile } from '../mcp-clients.ts';
import { AGENT_BODY } from '../voice-agents/kit.ts';
import { freshNumber } from './kit.ts';

const TELEPHONY_TOOLS = [
  'list_voice_agents',
  'get_voice_agent',
  'create_voice_agent',
  'update_voice_agent',
  'delete_voice_agent',
  'list_phone_numbers',
  'get_phone_number',
  'create_phone_number',
  'update_phone_number',
  'set_phone_number_default_voice_agent',
  'delete_phone_number',
];

const test = fileTest().extend('mcpUrl', { scope: 'file' }, serveMcpForFile);

describe.each(ERAS)('$label', (era) => {
  test('lists the telephony tools only in the telephony toolset, closed-world', async ({ mcpUrl, org }) => {
    const byDefault = await era.connect(mcpUrl, bearer(org.token));
    try {
      const names = (await byDefault.listTools()).tools.map((tool) => tool.name);
      expect(names.filter((name) => TELEPHONY_TOOLS.includes(name))).toEqual([]);
    } finally {
      await byDefault.close();
    }
    const client = await era.connect(mcpUrl, { ...bearer(org.token), 'x-mcp-toolsets': 'telephony' });
    try {
      const tools = (await client.listTools()).tools.filter((tool) => TELEPHONY_TOOLS.includes(tool.name));
      expect(tools.map((tool) => tool.name).sort()).toEqual([...TELEPHONY_TOOLS].sort());
      for (const tool of tools) {
        expect(tool.annotations?.openWorldHint, tool.name).toBe(false);
        expect(tool.annotations?.readOnlyHint, tool.name).toBe(
          tool.name.startsWith('list_') || tool.name.startsWith('get_'),
        );
        expect(tool.annotations?.destructiveHint === true, tool.name).toBe(tool.name.startsWith('delete_'));
      }
    } finally {
      await client.close();
    }
  });

  test('an assistant creates an agent and a number and sets, refuses and clears the default agent', async ({
    mcpUrl,
    org,
  }) => {
    const client = await era.connect(mcpUrl, { ...bearer(org.token), 'x-mcp-toolsets': 'telephony' });
    try {
      const agent = TOOL.create_voice_agent.output.parse(
        (await client.callTool('create_voice_agent', AGENT_BODY)).structuredContent,
      ).voice_agent;
      const paused = TOOL.create_voice_agent.output.parse(
        (await client.callTool('create_voice_agent', { ...AGENT_BODY, status: 'paused' })).structuredContent,
      ).voice_agent;
      const phone = TOOL.create_phone_number.output.parse(
        (await client.callTool('create_phone_number', { number: freshNumber() })).structuredContent,
      ).phone_number;

      const set = await client.callTool('set_phone_number_default_voice_agent', {
        id: phone._id,
        default_voice_agent_id: agent._id,
      });
      expect(set.isError).toBeFalsy();
      expect(
        TOOL.set_phone_number_default_voice_agent.output.parse(set.structuredContent).phone_number
          .default_voice_agent_id,
      ).toBe(agent._id);

      const refused = await client.callTool('set_phone_number_default_voice_agent', {
        id: phone._id,
        default_voice_agent_id: paused._id,
      });
      expect(refused.isError).toBe(true);
      expect(envelopeOf(refused)).toMatchObject({
        code: 'validation_failed',
        details: [expect.objectContaining({ field: 'default_voice_agent_id' })],
      });

      const cleared = await client.callTool('set_phone_number_default_voice_agent', {
        id: phone._id,
        default_voice_agent_id: null,
      });
      expect(
        TOOL.set_phone_number_default_voice_agent.output.parse(cleared.structuredContent).phone_number
          .default_voice_agent_id,
      ).toBeNull();
    } finally {
      await client.close();
    }
  });
});
