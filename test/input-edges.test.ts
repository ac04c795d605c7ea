// Locks in input at the edges: the public pages and hooks read their bodies through the same reader
// and input guard as /api/v1 (a lone surrogate or a non-UTF-8 byte is a 400, the proposal stays
// unanswered), and bytes that are not UTF-8 in any JSON body are a 400, never stored as U+FFFD.
import { describe, expect } from 'vitest';
import {
  createLead,
  createProposal,
  fileTest,
  readError,
  readOutput,
  sendProposal,
  type TestContext,
  type TestOrg,
  TOOL,
} from './fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

/** `{"name":"Acme <0xFF>"}`: one byte that is not UTF-8 inside an otherwise valid JSON text. */
function jsonWithInvalidByte(field: string): Blob {
  return new Blob([`{"${field}":"Acme `, new Uint8Array([0xff]), '"}']);
}

async function sentProposalToken(t: TestContext, org: TestOrg): Promise<{ id: string; token: string }> {
  const proposal = await createProposal(t, org);
  const { token } = await sendProposal(t, org, proposal._id);
  return { id: proposal._id, token };
}

async function statusOf(t: TestContext, org: TestOrg, id: string): Promise<string> {
  const res = await t.request('GET', `/api/v1/proposals/${id}`, { token: org.token });
  return (await readOutput(res, TOOL.get_proposal)).proposal.status;
}

describe('the public proposal routes go through the input guard', () => {
  test('refuses a lone surrogate in a JSON signature with a 400 naming it; the proposal stays unanswered', async ({
    t,
    org,
  }) => {
    const { id, token } = await sentProposalToken(t, org);
    // JSON.stringify writes the lone surrogate as the escape \ud800, which JSON.parse reads back.
    const res = await t.request('POST', `/p/${token}/accept`, {
      body: { name: 'Hank Scorpio', email: 'hank@globex.test', signature: 'Hank \ud800' },
    });
    const body = await readError(res, 400);
    expect(body.details?.map((d) => [d.field, d.code])).toEqual([['signature', 'lone_surrogate']]);
    expect(await statusOf(t, org, id)).toBe('sent');

    const ok = await t.request('POST', `/p/${token}/accept`, {
      body: { name: 'Hank Scorpio', email: 'hank@globex.test', signature: 'Hank' },
    });
    expect(ok.status).toBe(200);
    expect(await statusOf(t, org, id)).toBe('accepted');
  });

  test('refuses a NUL in a form decline reason and an encoded lone surrogate as 400 pages', async ({
    t,
    org,
  }) => {
    const { id, token } = await sentProposalToken(t, org);
    for (const body of ['reason=Too%00expensive', 'reason=Too%ED%A0%80expensive']) {
      const res = await t.app.request(`/p/${token}/decline`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect(res.status, body).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    }
    expect(await statusOf(t, org, id)).toBe('sent');
  });

  test('refuses bytes that are not UTF-8 in a public JSON body', async ({ t, org }) => {
    const { id, token } = await sentProposalToken(t, org);
    const res = await t.app.request(`/p/${token}/decline`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: jsonWithInvalidByte('reason'),
    });
    const body = await readError(res, 400);
    expect(body.details?.map((d) => [d.field, d.code])).toEqual([['(body)', 'malformed_encoding']]);
    expect(await statusOf(t, org, id)).toBe('sent');
  });
});

describe('a JSON body must be UTF-8', () => {
  test('answers 400 naming the body for a byte that is not UTF-8, as it does for the escaped lone surrogate', async ({
    t,
    org,
  }) => {
    const res = await t.app.request('/api/v1/leads', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.token}` },
      body: jsonWithInvalidByte('name'),
    });
    const body = await readError(res, 400);
    expect(body.code).toBe('validation_failed');
    expect(body.details).toEqual([
      { field: '(body)', message: 'must be valid UTF-8 text', code: 'malformed_encoding' },
    ]);
    const escaped = await t.request('POST', '/api/v1/leads', {
      token: org.token,
      body: { name: 'Acme \udcff' },
    });
    expect((await readError(escaped, 400)).details?.[0]?.code).toBe('lone_surrogate');
    const list = await t.request('GET', '/api/v1/leads?search=Acme', { token: org.token });
    expect((await readOutput(list, TOOL.list_leads)).total).toBe(0);
  });

  test('answers an MCP request whose body is not UTF-8 with a JSON-RPC parse error, and calls no tool', async ({
    t,
    org,
  }) => {
    const { token: pat } = await t.createPat(org.orgId, org.ownerId, ['mcp:write']);
    const call = (args: string) => [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_lead","arguments":',
      args,
    ];
    const res = await t.app.request('/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        authorization: `Bearer ${pat}`,
      },
      body: new Blob([...call('{"name":"Mcp Acme '), new Uint8Array([0xff]), '"}}}']),
    });
    expect(res.status).toBe(400);
    const body: unknown = await res.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
    const list = await t.request('GET', '/api/v1/leads?search=Mcp', { token: org.token });
    expect((await readOutput(list, TOOL.list_leads)).total).toBe(0);
  });

  test('still takes valid multi-byte UTF-8', async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Zürich Café 東京 🚀' });
    expect(lead.name).toBe('Zürich Café 東京 🚀');
  });
});
