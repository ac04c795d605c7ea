// Locks in the public proposal page /p/{token}: the HTML page (both parties named, money as the PDFs print it, each line's tax, strict CSP, no script, Markdown
// rendered without any active XSS payload), accept and decline with JSON or form bodies and their
// events, one answer only, a plain 404 for unknown, malformed or superseded tokens, and the
// 60-a-minute per-IP limit.
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents } from '../../core/db/schema.ts';
import { proposals } from '../../tools/proposals/tables.ts';
import {
  createContact,
  createLead,
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

const test = fileTest({ env: { TRUST_PROXY: '1' } });

let ipSeq = 0;
const freshIp = () => `198.18.${Math.floor(++ipSeq / 250)}.${ipSeq % 250}`;

const page = (
  t: TestContext,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
) =>
  t.request(init.method ?? 'GET', path, {
    body: init.body,
    headers: { 'x-forwarded-for': freshIp(), ...init.headers },
  });

const form = (t: TestContext, path: string, fields: Record<string, string>) =>
  t.app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': freshIp() },
    body: new URLSearchParams(fields).toString(),
  });

async function sentProposal(t: TestContext, org: TestOrg, input: Parameters<typeof createProposal>[2] = {}) {
  const p = await createProposal(t, org, input);
  const { token } = await sendProposal(t, org, p._id);
  return { id: p._id, token };
}

/** contract.signed carries the proposal as `proposal_id` (it is about the contract, not the record). */
const contractEvents = (t: TestContext, proposalId: string) =>
  t.services.db.system
    .select({ data: outboxEvents.data })
    .from(outboxEvents)
    .where(
      and(
        eq(outboxEvents.event, 'contract.signed'),
        sql`${outboxEvents.data}->>'proposal_id' = ${proposalId}`,
      ),
    );

const statusOf = async (t: TestContext, org: TestOrg, id: string) =>
  (
    await readOutput(
      await t.request('GET', `/api/v1/proposals/${id}`, { token: org.token }),
      TOOL.get_proposal,
    )
  ).proposal;

describe('the page', () => {
  test('renders title, sections, lines and total with a strict CSP and answer forms, no script', async ({
    t,
    org,
  }) => {
    const { token } = await sentProposal(t, org, {
      title: 'Fleet <renewal>',
      sections: [
        { heading: 'Scope & terms', body_markdown: '## Plan\n\n- one\n- [docs](https://example.com/docs)' },
      ],
      line_items: [{ description: 'Licences', quantity: 3, unit_price: 10.5 }],
      currency: 'EUR',
    });
    const res = await page(t, `/p/${token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).toMatch(/style-src 'nonce-[A-Za-z0-9+/=]+'/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain('<h1>Fleet &lt;renewal&gt;</h1>');
    expect(html).toContain('<h2>Scope &amp; terms</h2>');
    expect(html).toContain('<a href="https://example.com/docs" rel="nofollow noopener noreferrer">docs</a>');
    expect(html).toContain('EUR 31.50');
    expect(html).toContain(`action="/p/${token}/accept"`);
    expect(html).toContain(`action="/p/${token}/decline"`);
    expect(html).not.toContain('<script');
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(html).toContain(`<style nonce="${nonce}">`);
  });

  test("names both parties, prints money exactly as the PDFs do, and shows each line's tax", async ({
    t,
  }) => {
    const named = await t.createOrg({ name: 'Ελληνική ΑΕ' });
    const lead = await createLead(t, named, { name: 'Łódź Trading' });
    await createContact(t, named, {
      lead_id: lead._id,
      name: '株式会社 山田',
      emails: [{ email: 'yamada@lodz.example', type: 'work' }],
    });
    const p = await createProposal(t, named, {
      lead_id: lead._id,
      title: 'Rollout',
      line_items: [
        { description: 'Licences', quantity: 4, unit_price: 12000, tax_percent: 20 },
        { description: 'Training', quantity: 1, unit_price: 0.5, tax_percent: 8.875 },
      ],
      currency: 'USD',
    });
    const { token } = await sendProposal(t, named, p._id);
    const html = await (await page(t, `/p/${token}`)).text();
    expect(html).toContain('<strong id="from">Ελληνική ΑΕ</strong>');
    expect(html).toContain('<strong id="to">Łódź Trading</strong>');
    expect(html).toContain('(attn. 株式会社 山田)');
    // The format of the PDFs (core/money.ts formatAmount), never "48000.00 USD".
    expect(html).toContain('<td class="n">USD 48,000.00</td>');
    expect(html).toContain('<td class="n" id="subtotal">USD 48,000.50</td>');
    expect(html).not.toContain('48000.00 USD');
    // Each line's tax rate and amount, then the total tax and the total.
    expect(html).toContain('<td class="n">20%</td><td class="n">USD 9,600.00</td>');
    expect(html).toContain('<td class="n">8.875%</td><td class="n">USD 0.04</td>');
    expect(html).toContain('<td class="n" id="tax">USD 9,600.04</td>');
    expect(html).toContain('<td class="n" id="total">USD 57,600.54</td>');
  });

  test('renders no XSS payload active: raw HTML escaped, javascript: and data: links dropped, no images', async ({
    t,
    org,
  }) => {
    const payloads = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '<iframe src="https://evil.example"></iframe>',
      '[click](javascript:alert(1))',
      '[click2](JAVASCRIPT:alert(1))',
      '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
      '![img](data:image/png;base64,iVBORw0KGgo=)',
      '![remote](https://evil.example/pixel.png)',
      '<a href="javascript:alert(1)">raw</a>',
      '[vb](vbscript:msgbox(1))',
    ];
    const { token } = await sentProposal(t, org, {
      title: '<script>alert("title")</script>',
      sections: [{ heading: '<img src=x onerror=alert(2)>', body_markdown: payloads.join('\n\n') }],
    });
    const html = await (await page(t, `/p/${token}`)).text();
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<iframe/i);
    expect(html).not.toMatch(/href="\s*(javascript|vbscript|data):/i);
    expect(html).not.toMatch(/<[^>]+\son[a-z]+\s*=/i);
    expect(html).not.toMatch(/<a href="javascript/i);
    // The text is still shown, escaped.
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;iframe');
  });

  test('answers a plain 404 for unknown and malformed tokens, the same page for both', async ({ t }) => {
    const unknown = await page(t, `/p/${'A'.repeat(43)}`);
    const malformed = await page(t, '/p/short');
    expect(unknown.status).toBe(404);
    expect(malformed.status).toBe(404);
    const withoutNonce = async (res: Response) => (await res.text()).replace(/nonce="[^"]+"/, '');
    expect(await withoutNonce(unknown)).toBe(await withoutNonce(malformed));
    const json = await page(t, `/p/${'B'.repeat(43)}/accept`, {
      method: 'POST',
      body: { name: 'A', email: 'a@b.test' },
    });
    expect(json.status).toBe(404);
  });
});

describe('accept and decline', () => {
  test('accepts with JSON and a signature: proposal.accepted and contract.signed, once only', async ({
    t,
    org,
  }) => {
    const { id, token } = await sentProposal(t, org);
    const res = await page(t, `/p/${token}/accept`, {
      method: 'POST',
      body: { name: 'Hank Scorpio', email: 'hank@globex.test', signature: 'Hank Scorpio' },
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      proposal: {
        status: 'accepted',
        signed: true,
        accepted_by: { name: 'Hank Scorpio', email: 'hank@globex.test' },
      },
    });
    expect(JSON.stringify(body)).not.toContain(org.orgId);
    const p = await statusOf(t, org, id);
    expect(p).toMatchObject({ status: 'accepted', signed: true, accepted_by: { name: 'Hank Scorpio' } });
    const events = (await eventsOf(t, id, org.orgId)).map((e) => e.event);
    expect(events).toEqual(['proposal.sent', 'proposal.accepted']);
    const [signed] = await contractEvents(t, id);
    expect(signed?.data).toMatchObject({
      proposal_id: id,
      signer: { name: 'Hank Scorpio' },
      signature: 'Hank Scorpio',
    });

    const again = await page(t, `/p/${token}/accept`, {
      method: 'POST',
      body: { name: 'X', email: 'x@y.test' },
    });
    expect((await readError(again, 400)).code).toBe('invalid_transition');
    const decline = await page(t, `/p/${token}/decline`, { method: 'POST', body: {} });
    expect((await readError(decline, 400)).code).toBe('invalid_transition');
    expect((await statusOf(t, org, id)).accepted_by?.name).toBe('Hank Scorpio');
    // The page now shows who accepted, without forms.
    const html = await (await page(t, `/p/${token}`)).text();
    expect(html).toContain('Accepted by Hank Scorpio');
    expect(html).not.toContain('<form');
  });

  test('accepts a form post without signature: an HTML confirmation and no contract.signed', async ({
    t,
    org,
  }) => {
    const { id, token } = await sentProposal(t, org);
    const res = await form(t, `/p/${token}/accept`, {
      name: 'Smithers',
      email: 'smithers@globex.test',
      signature: '',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await res.text()).toContain('You accepted');
    expect(await statusOf(t, org, id)).toMatchObject({ status: 'accepted', signed: false });
    expect((await eventsOf(t, id, org.orgId)).map((e) => e.event)).toEqual([
      'proposal.sent',
      'proposal.accepted',
    ]);
    expect(await contractEvents(t, id)).toEqual([]);
  });

  test('declines by form and by JSON with a reason: proposal.declined', async ({ t, org }) => {
    const a = await sentProposal(t, org);
    const res = await form(t, `/p/${a.token}/decline`, { reason: 'Too expensive' });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('You declined');
    expect(await statusOf(t, org, a.id)).toMatchObject({
      status: 'declined',
      decline_reason: 'Too expensive',
    });
    expect((await eventsOf(t, a.id, org.orgId)).map((e) => e.event)).toEqual([
      'proposal.sent',
      'proposal.declined',
    ]);
    const b = await sentProposal(t, org);
    const json = await page(t, `/p/${b.token}/decline`, { method: 'POST', body: {} });
    expect(json.status).toBe(200);
    expect(await statusOf(t, org, b.id)).toMatchObject({ status: 'declined', decline_reason: null });
  });

  test('answers a missing or invalid field with a 400 naming it, as JSON or as a page', async ({
    t,
    org,
  }) => {
    const { id, token } = await sentProposal(t, org);
    const json = await page(t, `/p/${token}/accept`, { method: 'POST', body: { name: 'A', email: 'nope' } });
    expect(detailFields(await readError(json, 400))).toEqual(['email']);
    const html = await form(t, `/p/${token}/accept`, { email: 'a@b.test' });
    expect(html.status).toBe(400);
    expect(await html.text()).toContain('name');
    expect((await statusOf(t, org, id)).status).toBe('sent');
    const [row] = await t.services.db.system.select().from(proposals).where(eq(proposals.id, id));
    expect(row?.acceptedAt).toBeNull();
  });
});

describe('rate limit', () => {
  test('allows 60 requests a minute per IP on public pages, the 61st is a 429', async ({ t }) => {
    const ip = '203.0.113.77';
    const path = `/p/${'C'.repeat(43)}`;
    for (let i = 0; i < 60; i++) {
      const res = await t.request('GET', path, { headers: { 'x-forwarded-for': ip } });
      expect(res.status).toBe(404);
    }
    const refused = await t.request('GET', path, { headers: { 'x-forwarded-for': ip } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
  });
});
