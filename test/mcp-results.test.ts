// Locks in two MCP promises: a write whose result is over the size budget still reports success
// through the official client (the saved record's id and a shortened view, a note not to repeat it),
// so a model does not create it twice; and with MCP_ALLOWED_ORIGINS unset, /mcp accepts the
// server's own loopback origins (http://localhost:PORT, http://127.0.0.1:PORT, http://[::1]:PORT)
// and still refuses every other browser origin.
import { describe, expect } from 'vitest';
import { RESULT_BUDGET_CHARS } from '../mcp/results.ts';
import { createLead, fileTest, readOutput, type TestContext, type TestOrg, TOOL } from './fixtures/index.ts';
import { bearer, ERAS, serveMcp, textsOf } from './mcp-clients.ts';

const PORT = '3917';

const test = fileTest({ env: { PORT }, plan: 'enterprise' });

describe('a write over the result budget', () => {
  test('reports success with the id and a shortened view, and the record exists once', async ({ t, org }) => {
    const lead = await createLead(t, org);
    const longText = `${'Scope of work. '.repeat(3300)}End.`; // ~49,500 characters per section
    const args = {
      lead_id: lead._id,
      title: 'Big proposal',
      sections: [
        { heading: 'One', body_markdown: longText },
        { heading: 'Two', body_markdown: longText },
      ],
    };
    const { url, stop } = await serveMcp(t);
    try {
      for (const era of ERAS) {
        const client = await era.connect(url, { ...bearer(org.token), 'X-MCP-Toolsets': 'billing' });
        try {
          // The official clients validate structuredContent against the output schema: a success
          // they accept is a schema-valid result.
          const result = await client.callTool('create_proposal', args);
          expect(result.isError ?? false, era.label).toBe(false);
          const view = TOOL.create_proposal.output.parse(result.structuredContent);
          const [text, note, ...rest] = textsOf(result);
          expect(rest).toEqual([]);
          expect((text ?? '').length).toBeLessThanOrEqual(RESULT_BUDGET_CHARS);
          expect(JSON.parse(text ?? 'null')).toEqual(result.structuredContent);
          expect(view.proposal.title).toBe('Big proposal');
          expect(view.proposal.sections[0]?.body_markdown.endsWith('…')).toBe(true);
          expect(note).toContain('RESULT SHORTENED: create_proposal succeeded and its change is saved');
          expect(note).toContain(view.proposal._id);
          expect(note).toContain('do not call it again');

          // Saved once, whole: the REST read returns the full text under that id.
          const saved = await readOutput(
            await t.request('GET', `/api/v1/proposals/${view.proposal._id}`, { token: org.token }),
            TOOL.get_proposal,
          );
          expect(saved.proposal.sections[0]?.body_markdown === longText).toBe(true);
        } finally {
          await client.close();
        }
      }
      const listed = await readOutput(
        await t.request('GET', `/api/v1/proposals?lead_id=${lead._id}`, { token: org.token }),
        TOOL.list_proposals,
      );
      expect(listed.total).toBe(ERAS.length);
    } finally {
      await stop();
    }
  });
});

describe('browser origins with MCP_ALLOWED_ORIGINS unset', () => {
  const ping = (t: TestContext, org: TestOrg, origin: string) =>
    t.request('POST', '/mcp', {
      token: org.token,
      body: { jsonrpc: '2.0', id: 1, method: 'ping' },
      headers: {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        origin,
      },
    });

  test.for([`http://localhost:${PORT}`, `http://127.0.0.1:${PORT}`, `http://[::1]:${PORT}`])(
    "accepts the server's own loopback origin %s",
    async (origin, { t, org }) => {
      expect((await ping(t, org, origin)).status).toBe(200);
    },
  );

  test.for([
    'http://localhost:3918',
    `https://localhost:${PORT}`,
    'https://evil.example.test',
    `http://evil.example.test:${PORT}`,
  ])('refuses %s with 403', async (origin, { t, org }) => {
    const res = await ping(t, org, origin);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: 'Forbidden',
      code: 'forbidden',
      message: 'Origin not allowed',
    });
  });
});
