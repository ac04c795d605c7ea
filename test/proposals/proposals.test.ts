// Locks in proposals over REST and MCP: drafts with sections and optional priced lines, merge updates
// and delete only while draft, list filters and search, send (a new hashed token each time, the
// MCP preview without confirm), every allowed and refused status move, the daily expiry, roles and scopes.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { expireDueProposals } from '../../tools/proposals/jobs.ts';
import { proposals } from '../../tools/proposals/tables.ts';
import {
  createContact,
  createLead,
  createOpportunity,
  createProposal,
  detailFields,
  eventsOf,
  fileTest,
  readError,
  readOutput,
  sendProposal,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

const LINES = [
  { description: 'Design', quantity: 2, unit_price: 100, tax_percent: 10 },
  { description: 'Build', quantity: 1, unit_price: 50.5 },
];

const api = (t: TestContext, org: TestOrg, method: string, path: string, body?: unknown, token = org.token) =>
  t.request(method, `/api/v1${path}`, { token, body });

async function expectRefused(res: Response) {
  const body = await readError(res, 400);
  expect(body.code).toBe('invalid_transition');
}

const rowOf = async (t: TestContext, id: string) => {
  const [row] = await t.services.db.system.select().from(proposals).where(eq(proposals.id, id));
  if (!row) throw new Error(`no proposal ${id}`);
  return row;
};

describe('create, get, update, delete', () => {
  test('creates an unpriced draft without totals and a priced one with exact totals', async ({ t, org }) => {
    const plain = await createProposal(t, org);
    expect(plain).toMatchObject({
      status: 'draft',
      title: 'Website redesign',
      sections: [{ heading: 'Scope', body_markdown: 'A **new** website.' }],
      currency: null,
      line_items: [],
      subtotal: null,
      total: null,
      public_url: null,
      sent_at: null,
      accepted_by: null,
      signed: false,
    });
    const priced = await createProposal(t, org, {
      line_items: LINES,
      currency: 'USD',
      valid_until: '2099-12-31',
    });
    expect(priced).toMatchObject({ subtotal: 250.5, tax_total: 20, total: 270.5, valid_until: '2099-12-31' });
    expect(priced.line_items[0]).toMatchObject({ amount: 200, tax_amount: 20 });
    const got = await readOutput(await api(t, org, 'GET', `/proposals/${priced._id}`), TOOL.get_proposal);
    expect(got.proposal).toEqual(priced);
  });

  test('needs a currency with lines, a live lead and a deal of that lead; limits sections', async ({
    t,
    org,
    other,
  }) => {
    const lead = await createLead(t, org);
    const noCurrency = await api(t, org, 'POST', '/proposals', {
      lead_id: lead._id,
      title: 'T',
      sections: [{ heading: 'H', body_markdown: '' }],
      line_items: LINES,
    });
    expect(detailFields(await readError(noCurrency, 400))).toEqual(['currency']);
    const foreign = await createLead(t, other);
    expect(
      (
        await api(t, org, 'POST', '/proposals', {
          lead_id: foreign._id,
          title: 'T',
          sections: [{ heading: 'H', body_markdown: '' }],
        })
      ).status,
    ).toBe(404);
    const deal = await createOpportunity(t, org);
    const wrongDeal = await api(t, org, 'POST', '/proposals', {
      lead_id: lead._id,
      opportunity_id: deal._id,
      title: 'T',
      sections: [{ heading: 'H', body_markdown: '' }],
    });
    expect(detailFields(await readError(wrongDeal, 400))).toEqual(['opportunity_id']);
    const noSections = await api(t, org, 'POST', '/proposals', {
      lead_id: lead._id,
      title: 'T',
      sections: [],
    });
    expect(detailFields(await readError(noSections, 400))).toEqual(['sections']);
    const longTitle = await api(t, org, 'POST', '/proposals', {
      lead_id: lead._id,
      title: 'x'.repeat(301),
      sections: [{ heading: 'H', body_markdown: 'b' }],
    });
    expect(detailFields(await readError(longTitle, 400))).toEqual(['title']);
  });

  test('merges PATCH and PUT into a draft; null line_items removes the prices', async ({ t, org }) => {
    const p = await createProposal(t, org, { line_items: LINES, currency: 'EUR' });
    const patched = await readOutput(
      await api(t, org, 'PATCH', `/proposals/${p._id}`, { title: 'New title' }),
      TOOL.update_proposal,
    );
    expect(patched.proposal).toMatchObject({ title: 'New title', currency: 'EUR', total: 270.5 });
    const put = await readOutput(
      await api(t, org, 'PUT', `/proposals/${p._id}`, { line_items: null, valid_until: '2099-01-01' }),
      TOOL.update_proposal,
    );
    expect(put.proposal).toMatchObject({
      title: 'New title',
      line_items: [],
      total: null,
      valid_until: '2099-01-01',
    });
  });

  test('deletes a draft for good; a sent proposal can be neither edited nor deleted', async ({ t, org }) => {
    const draft = await createProposal(t, org);
    expect((await api(t, org, 'DELETE', `/proposals/${draft._id}`)).status).toBe(200);
    expect((await api(t, org, 'GET', `/proposals/${draft._id}`)).status).toBe(404);
    const sent = await createProposal(t, org);
    await sendProposal(t, org, sent._id);
    await expectRefused(await api(t, org, 'PATCH', `/proposals/${sent._id}`, { title: 'x' }));
    await expectRefused(await api(t, org, 'DELETE', `/proposals/${sent._id}`));
  });

  test('answers 404 to another organization and a 400 for a malformed id', async ({ t, org, other }) => {
    const p = await createProposal(t, org);
    expect((await api(t, org, 'GET', `/proposals/${p._id}`, undefined, other.token)).status).toBe(404);
    expect((await api(t, org, 'POST', `/proposals/${p._id}/send`, {}, other.token)).status).toBe(404);
    expect((await api(t, org, 'GET', '/proposals/not-an-id')).status).toBe(400);
    expect((await api(t, org, 'POST', '/proposal-ai/not-an-id/suggest-questions')).status).toBe(400);
  });
});

describe('list', () => {
  test('filters by status and lead, searches the title', async ({ t, org }) => {
    const lead = await createLead(t, org);
    await createContact(t, org, { lead_id: lead._id, emails: [{ email: 'a@b.test', type: 'work' }] });
    const a = await createProposal(t, org, { lead_id: lead._id, title: 'Quarterly zeppelin maintenance' });
    const b = await createProposal(t, org, { lead_id: lead._id, title: 'Annual audit' });
    await sendProposal(t, org, b._id);
    const byLead = await readOutput(
      await api(t, org, 'GET', `/proposals?lead_id=${lead._id}`),
      TOOL.list_proposals,
    );
    expect(byLead.proposals.map((p) => p._id).sort()).toEqual([a._id, b._id].sort());
    const sent = await readOutput(
      await api(t, org, 'GET', `/proposals?lead_id=${lead._id}&status=sent`),
      TOOL.list_proposals,
    );
    expect(sent.proposals.map((p) => p._id)).toEqual([b._id]);
    const found = await readOutput(await api(t, org, 'GET', '/proposals?search=zeppel'), TOOL.list_proposals);
    expect(found.proposals.map((p) => p._id)).toEqual([a._id]);
    expect((await api(t, org, 'GET', '/proposals?status=won')).status).toBe(400);
  });
});

describe('send', () => {
  test('sends to the first contact e-mail, stores only the hash of a fresh token, emits proposal.sent', async ({
    t,
    org,
  }) => {
    const p = await createProposal(t, org, { line_items: LINES, currency: 'USD' });
    const out = await sendProposal(t, org, p._id);
    expect(out.sent).toBe(true);
    expect(out.public_url).toBe(`${t.config.publicBaseUrl}/p/${out.token}`);
    expect(out.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(out.proposal).toMatchObject({
      status: 'sent',
      sent_to: 'hank@globex.test',
      public_url: out.public_url,
    });
    const row = await rowOf(t, p._id);
    expect(row.publicTokenHash).toBe(createHash('sha256').update(out.token).digest('hex'));
    expect(JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(
      out.token,
    );
    const got = await readOutput(await api(t, org, 'GET', `/proposals/${p._id}`), TOOL.get_proposal);
    expect(got.proposal.public_url).toBeNull();
    const events = await eventsOf(t, p._id, org.orgId);
    expect(events.map((e) => e.event)).toEqual(['proposal.sent']);
    expect(JSON.stringify(events)).not.toContain(out.token);
  });

  test('a resend issues a new link and the old one stops working', async ({ t, org }) => {
    const p = await createProposal(t, org);
    const first = await sendProposal(t, org, p._id, { to: 'someone@else.test' });
    const second = await sendProposal(t, org, p._id);
    expect(second.token).not.toBe(first.token);
    expect((await t.request('GET', `/p/${first.token}`)).status).toBe(404);
    expect((await t.request('GET', `/p/${second.token}`)).status).toBe(200);
    expect((await rowOf(t, p._id)).sendCount).toBe(2);
  });

  test('needs a recipient, and a valid_until not in the past', async ({ t, org }) => {
    const lead = await createLead(t, org);
    const p = await createProposal(t, org, { lead_id: lead._id });
    expect(
      detailFields(await readError(await api(t, org, 'POST', `/proposals/${p._id}/send`, {}), 400)),
    ).toEqual(['to']);
    const old = await createProposal(t, org, { valid_until: '2000-01-01' });
    expect(
      detailFields(await readError(await api(t, org, 'POST', `/proposals/${old._id}/send`, {}), 400)),
    ).toEqual(['valid_until']);
    expect((await rowOf(t, p._id)).status).toBe('draft');
  });

  test('REST previews with confirm false; MCP previews unless confirm is true', async ({ t, org }) => {
    const p = await createProposal(t, org);
    const preview = await readOutput(
      await api(t, org, 'POST', `/proposals/${p._id}/send`, { confirm: false }),
      TOOL.send_proposal,
    );
    expect(preview).toEqual({
      sent: false,
      preview: {
        action:
          'E-mail a link to the public page of proposal "Website redesign" to hank@globex.test; earlier links stop working',
        sender: expect.stringContaining(t.config.mailFrom),
        to: ['hank@globex.test'],
        cc: [],
        bcc: [],
        subject: 'Proposal: Website redesign',
        amounts: [],
        send_at: null,
        attachments: [],
        details: [],
      },
    });
    expect((await rowOf(t, p._id)).status).toBe('draft');

    const mcp = (args: Record<string, unknown>) =>
      t.request('POST', '/mcp', {
        token: org.token,
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'send_proposal', arguments: args },
        },
        headers: {
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'x-mcp-toolsets': 'billing',
        },
      });
    const noConfirm = await (await mcp({ id: p._id })).text();
    expect(noConfirm).toContain('"sent":false');
    expect((await rowOf(t, p._id)).status).toBe('draft');
    expect(await eventsOf(t, p._id, org.orgId)).toEqual([]);
    const confirmed = await (await mcp({ id: p._id, confirm: true })).text();
    expect(confirmed).toContain('"sent":true');
    expect((await rowOf(t, p._id)).status).toBe('sent');
  });
});

describe('status moves', () => {
  test('refuses sending an accepted or declined proposal', async ({ t, org }) => {
    const p = await createProposal(t, org);
    const { token } = await sendProposal(t, org, p._id);
    const accepted = await t.request('POST', `/p/${token}/accept`, {
      body: { name: 'Hank', email: 'hank@globex.test' },
    });
    expect(accepted.status).toBe(200);
    await expectRefused(await api(t, org, 'POST', `/proposals/${p._id}/send`, {}));
    const q = await createProposal(t, org);
    const sent = await sendProposal(t, org, q._id);
    expect((await t.request('POST', `/p/${sent.token}/decline`, { body: {} })).status).toBe(200);
    await expectRefused(await api(t, org, 'POST', `/proposals/${q._id}/send`, {}));
  });

  test('the daily job expires drafts and sent proposals past valid_until, and their links answer 404', async ({
    t,
    org,
  }) => {
    const draft = await createProposal(t, org, { valid_until: '2001-01-01' });
    const p = await createProposal(t, org, { valid_until: '2099-01-01' });
    const { token } = await sendProposal(t, org, p._id);
    const future = new Date('2099-01-02T12:00:00Z');
    expect(await expireDueProposals(t.services, future, org.orgId)).toBeGreaterThanOrEqual(2);
    const got = await readOutput(await api(t, org, 'GET', `/proposals/${p._id}`), TOOL.get_proposal);
    expect(got.proposal.status).toBe('expired');
    expect(got.proposal.expired_at).not.toBeNull();
    expect((await rowOf(t, draft._id)).status).toBe('expired');
    const page = await t.request('GET', `/p/${token}`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('expired');
    await expectRefused(await api(t, org, 'POST', `/proposals/${p._id}/send`, {}));
    // An answer through the (still valid) link reaches the machine: expired -> accepted is refused.
    await expectRefused(
      await t.request('POST', `/p/${token}/accept`, { body: { name: 'Late', email: 'late@globex.test' } }),
    );
    // A second run finds nothing more of this organization.
    expect(await expireDueProposals(t.services, future, org.orgId)).toBe(0);
  });
});

describe('withdraw', () => {
  test('expire_proposal withdraws a sent proposal: its page says expired, answers are refused', async ({
    t,
    org,
  }) => {
    const p = await createProposal(t, org);
    const { token } = await sendProposal(t, org, p._id);
    const out = await readOutput(
      await api(t, org, 'POST', `/proposals/${p._id}/expire`),
      TOOL.expire_proposal,
    );
    expect(out.proposal).toMatchObject({ status: 'expired' });
    const pageRes = await t.request('GET', `/p/${token}`);
    expect(pageRes.status).toBe(404);
    expect(await pageRes.text()).toContain('expired');
    await expectRefused(await t.request('POST', `/p/${token}/decline`, { body: {} }));
    // Again: a no-op.
    expect((await api(t, org, 'POST', `/proposals/${p._id}/expire`)).status).toBe(200);
  });
});

describe('access', () => {
  test('needs read:proposals to read and write:proposals to write', async ({ t, org }) => {
    const p = await createProposal(t, org);
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:proposals']);
    expect((await api(t, org, 'GET', `/proposals/${p._id}`, undefined, reader.token)).status).toBe(200);
    expect(
      (await api(t, org, 'POST', `/proposal-ai/${p._id}/suggest-questions`, undefined, reader.token)).status,
    ).toBe(200);
    const denied = await readError(
      await api(t, org, 'PATCH', `/proposals/${p._id}`, { title: 'x' }, reader.token),
      403,
    );
    expect(denied.required_scope).toBe('write:proposals');
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await api(t, org, 'GET', '/proposals', undefined, leadsOnly.token)).status).toBe(403);
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:proposals', 'write:proposals']);
    expect((await api(t, org, 'PATCH', `/proposals/${p._id}`, { title: 'y' }, writer.token)).status).toBe(
      200,
    );
  });

  test('viewers read, members create and send but do not delete', async ({ t, org }) => {
    const p = await createProposal(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await api(t, org, 'GET', `/proposals/${p._id}`, undefined, viewer.token)).status).toBe(200);
    expect((await api(t, org, 'POST', `/proposals/${p._id}/send`, {}, viewer.token)).status).toBe(403);
    const member = await t.createUser(org.orgId, 'member');
    const mine = await createProposal(t, member);
    expect((await api(t, org, 'DELETE', `/proposals/${mine._id}`, undefined, member.token)).status).toBe(403);
    expect((await api(t, org, 'POST', `/proposals/${mine._id}/send`, {}, member.token)).status).toBe(200);
  });
});

describe('declarations', () => {
  test('puts every proposal tool in the billing toolset with honest annotations', () => {
    const names = [
      'list_proposals',
      'get_proposal',
      'create_proposal',
      'update_proposal',
      'delete_proposal',
      'send_proposal',
      'suggest_proposal_questions',
    ] as const;
    for (const name of names) expect(TOOL[name].toolset).toBe('billing');
    expect(TOOL.send_proposal.annotations).toMatchObject({
      readOnlyHint: false,
      openWorldHint: true,
      idempotentHint: false,
      destructiveHint: false,
    });
    expect(TOOL.suggest_proposal_questions.annotations).toMatchObject({
      readOnlyHint: true,
      openWorldHint: true,
    });
    expect(TOOL.delete_proposal.annotations.destructiveHint).toBe(true);
    expect(TOOL.send_proposal.access).toEqual({
      kind: 'write',
      resource: 'proposals',
      permission: 'proposals.edit',
    });
  });
});
