// Locks in the message tools over MCP: listed in the telephony toolset with open-world sends, a send without confirm only previews (nothing reaches the provider), confirm true sends, and get_message / list_messages read it back.
import { describe, expect } from 'vitest';
import { TOOL } from '../fixtures/index.ts';
import { bearer, ERAS, serveMcpForFile } from '../mcp-clients.ts';
import { connectTelephony, telephonyTest } from '../telephony/kit.ts';
import { createNumber, leadWithPhone } from './kit.ts';

const MESSAGE_TOOLS = ['send_sms', 'send_whatsapp', 'get_message', 'list_messages'];

const test = telephonyTest({ options: { withoutRateLimits: true } }).extend(
  'mcpUrl',
  { scope: 'file' },
  serveMcpForFile,
);

describe.each(ERAS)('$label', (era) => {
  test('previews without confirm, sends with it, reads it back', async ({ t, peer, mcpUrl }) => {
    const org = await t.createOrg();
    await connectTelephony(t, org, peer);
    const from = await createNumber(t, org);
    const lead = await leadWithPhone(t, org);
    const client = await era.connect(mcpUrl, { ...bearer(org.token), 'x-mcp-toolsets': 'telephony' });
    try {
      const tools = (await client.listTools()).tools.filter((tool) => MESSAGE_TOOLS.includes(tool.name));
      expect(tools.map((tool) => tool.name).sort()).toEqual([...MESSAGE_TOOLS].sort());
      for (const tool of tools) {
        expect(tool.annotations?.openWorldHint, tool.name).toBe(tool.name.startsWith('send_'));
        expect(tool.annotations?.readOnlyHint, tool.name).toBe(!tool.name.startsWith('send_'));
      }
      const args = { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Via MCP' };
      const before = peer.messages.length;
      const preview = TOOL.send_sms.output.parse((await client.callTool('send_sms', args)).structuredContent);
      expect(preview.sent).toBe(false);
      expect(preview.preview?.to).toEqual([lead.phone]);
      expect(peer.messages.length).toBe(before);
      const sent = TOOL.send_sms.output.parse(
        (await client.callTool('send_sms', { ...args, confirm: true })).structuredContent,
      );
      expect(sent.sent).toBe(true);
      expect(sent.message?.sid).toBe(peer.messages.at(-1)?.sid);
      const got = TOOL.get_message.output.parse(
        (await client.callTool('get_message', { id: sent.message?._id ?? '' })).structuredContent,
      );
      expect(got.message.body).toBe('Via MCP');
      const listed = TOOL.list_messages.output.parse(
        (await client.callTool('list_messages', { lead_id: lead.leadId })).structuredContent,
      );
      expect(listed.messages.map((m) => m._id)).toEqual([sent.message?._id]);
      const window = await client.callTool('send_whatsapp', { ...args, confirm: true });
      expect(window.isError).toBe(true);
    } finally {
      await client.close();
      await t.request('DELETE', '/api/v1/settings/telephony', { token: org.token });
    }
  });
});
