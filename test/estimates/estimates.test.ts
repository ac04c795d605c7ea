// Locks in estimates over REST and MCP: numbered drafts (EST-000001 at creation, per organization),
// merge updates and delete only while draft, every allowed and refused status move, send (MCP preview
// without confirm), conversion into a draft invoice (once), the daily expiry with a fixed clock, list
// filters and search, the plan feature on every route, scopes, roles and tenancy.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { organizations } from '../../core/db/schema.ts';
import { expireEstimates } from '../../tools/estimates/jobs.ts';
import { ROUTES } from '../../tools/index.ts';
import {
  type Caller,
  createContact,
  createEstimate,
  createLead,
  createOpportunity,
  detailFields,
  ESTIMATE_LINES,
  type Estimate,
  eventsOf,
  fileTest,
  readError,
  readJson,
  readOutput,
  sendEstimate,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { callToolOverMcp } from '../fixtures/mcp-call.ts';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

const LINES = [
  { description: 'Consulting', quantity: 2, unit_price: 100, tax_percent: 10 },
  { description: 'Setup', quantity: 1, unit_price: 50.5, discount_percent: 10 },
];

const create = (
  t: TestContext,
  org: TestOrg,
  body: Parameters<typeof createEstimate>[2] = {},
  as: Caller = org,
) => createEstimate(t, as, { line_items: LINES, ...body });

const post = (t: TestContext, org: TestOrg, path: string, body: unknown = {}, as: Caller = org) =>
  t.request('POST', `/api/v1/estimates${path}`, { token: as.token, body });

async function expectRefused(res: Response) {
  const body = await readError(res, 400);
  expect(body.code).toBe('invalid_transition');
  expect(detailFields(body)).toEqual(['status']);
}

const accept = async (t: TestContext, org: TestOrg, id: string, as: Caller = org) =>
  (await readOutput(await post(t, org, `/${id}/accept`, {}, as), TOOL.accept_estimate)).estimate;

describe('create, get, update, delete', () => {
  test('creates a priced, numbered draft', async ({ t, org }) => {
    const est = await create(t, org, { notes: 'First', issue_date: '2031-01-10', valid_until: '2031-02-10' });
    expect(est).toMatchObject({
      status: 'draft',
      currency: 'USD',
      subtotal: 245.45,
      tax_total: 20,
      total: 265.45,
      notes: 'First',
      issue_date: '2031-01-10',
      valid_until: '2031-02-10',
      sent_at: null,
      accepted_at: null,
      declined_at: null,
      decline_reason: null,
      expired_at: null,
      invoice_id: null,
    });
    expect(est.number).toMatch(/^EST-\d{6}$/);
    expect(est.line_items[1]).toMatchObject({ amount: 45.45, tax_amount: 0 });
    const got = await readOutput(
      await t.request('GET', `/api/v1/estimates/${est._id}`, { token: org.token }),
      TOOL.get_estimate,
    );
    expect(got.estimate).toEqual(est);
    // The catalogue has no estimate events: creating one emits nothing.
    expect(await eventsOf(t, est._id, org.orgId)).toEqual([]);
  });

  test('refuses valid_until before issue_date and references outside the lead, naming the fields', async ({
    t,
    org,
    other,
  }) => {
    const lead = await createLead(t, org);
    const otherLead = await createLead(t, org);
    const contact = await createContact(t, org, { lead_id: otherLead._id });
    const deal = await createOpportunity(t, org, { lead_id: otherLead._id });
    const res = await post(t, org, '', {
      lead_id: lead._id,
      currency: 'USD',
      line_items: LINES,
      issue_date: '2031-02-01',
      valid_until: '2031-01-31',
      contact_id: contact._id,
      opportunity_id: deal._id,
    });
    expect(detailFields(await readError(res, 400))).toEqual(['valid_until', 'contact_id', 'opportunity_id']);
    const ok = await create(t, org, {
      lead_id: otherLead._id,
      contact_id: contact._id,
      opportunity_id: deal._id,
    });
    expect(ok).toMatchObject({ contact_id: contact._id, opportunity_id: deal._id });
    const foreign = await createLead(t, other);
    expect(
      (await post(t, org, '', { lead_id: foreign._id, currency: 'USD', line_items: LINES })).status,
    ).toBe(404);
    const jpy = await post(t, org, '', {
      lead_id: lead._id,
      currency: 'JPY',
      line_items: [{ description: 'x', quantity: 1, unit_price: 1.5 }],
    });
    expect(detailFields(await readError(jpy, 400))).toEqual(['line_items.0.unit_price']);
  });

  test('merges PATCH and PUT into a draft and reprices the lines; checks valid_until against the stored issue_date', async ({
    t,
    org,
  }) => {
    const est = await create(t, org, { notes: 'a', issue_date: '2031-03-01' });
    const patched = await readOutput(
      await t.request('PATCH', `/api/v1/estimates/${est._id}`, {
        token: org.token,
        body: {
          line_items: [{ description: 'One', quantity: 3, unit_price: 10 }],
          valid_until: '2031-03-31',
        },
      }),
      TOOL.update_estimate,
    );
    expect(patched.estimate).toMatchObject({
      notes: 'a',
      number: est.number,
      valid_until: '2031-03-31',
      total: 30,
      subtotal: 30,
    });
    const put = await readOutput(
      await t.request('PUT', `/api/v1/estimates/${est._id}`, { token: org.token, body: { notes: null } }),
      TOOL.update_estimate,
    );
    expect(put.estimate).toMatchObject({ notes: null, total: 30, valid_until: '2031-03-31' });
    const early = await t.request('PATCH', `/api/v1/estimates/${est._id}`, {
      token: org.token,
      body: { valid_until: '2031-02-28' },
    });
    expect(detailFields(await readError(early, 400))).toEqual(['valid_until']);
  });

  test('deletes a draft for good; a sent estimate cannot be edited or deleted', async ({ t, org }) => {
    const draft = await create(t, org);
    expect((await t.request('DELETE', `/api/v1/estimates/${draft._id}`, { token: org.token })).status).toBe(
      200,
    );
    expect((await t.request('GET', `/api/v1/estimates/${draft._id}`, { token: org.token })).status).toBe(404);

    const sent = await create(t, org);
    await sendEstimate(t, org, sent._id);
    await expectRefused(
      await t.request('PATCH', `/api/v1/estimates/${sent._id}`, { token: org.token, body: { notes: 'x' } }),
    );
    await expectRefused(
      await t.request('PUT', `/api/v1/estimates/${sent._id}`, { token: org.token, body: { notes: 'x' } }),
    );
    await expectRefused(await t.request('DELETE', `/api/v1/estimates/${sent._id}`, { token: org.token }));
  });

  test('answers 404 to another organization and leaves the estimate as it was', async ({ t, org, other }) => {
    const est = await create(t, org);
    expect((await t.request('GET', `/api/v1/estimates/${est._id}`, { token: other.token })).status).toBe(404);
    expect((await post(t, org, `/${est._id}/send`, { to: 'x@example.test' }, other)).status).toBe(404);
    expect((await t.request('DELETE', `/api/v1/estimates/${est._id}`, { token: other.token })).status).toBe(
      404,
    );
    const after = await readOutput(
      await t.request('GET', `/api/v1/estimates/${est._id}`, { token: org.token }),
      TOOL.get_estimate,
    );
    expect(after.estimate).toEqual(est);
  });
});

describe('numbering', () => {
  test('numbers estimates EST-000001, EST-000002... at creation, per organization, never reusing a deleted draft number', async ({
    t,
    org,
  }) => {
    const fresh = await t.createOrg({ name: 'Numbering', plan: 'pro' });
    const a = await createEstimate(t, fresh);
    const b = await createEstimate(t, fresh);
    expect([a.number, b.number]).toEqual(['EST-000001', 'EST-000002']);
    // A refused create takes no number.
    const bad = await post(
      t,
      org,
      '',
      {
        lead_id: a.lead_id,
        currency: 'USD',
        line_items: LINES,
        valid_until: '2031-01-01',
        issue_date: '2031-02-01',
      },
      fresh,
    );
    expect(bad.status).toBe(400);
    expect((await t.request('DELETE', `/api/v1/estimates/${b._id}`, { token: fresh.token })).status).toBe(
      200,
    );
    expect((await createEstimate(t, fresh)).number).toBe('EST-000003');
    const elsewhere = await t.createOrg({ name: 'Numbering 2', plan: 'pro' });
    expect((await createEstimate(t, elsewhere)).number).toBe('EST-000001');
  });
});

type State = 'draft' | 'sent' | 'accepted' | 'declined' | 'expired';

describe('status moves', () => {
  /** An estimate brought to `status` through the API (expired through the job). */
  async function inState(t: TestContext, org: TestOrg, status: State): Promise<Estimate> {
    const est = await create(t, org, { valid_until: status === 'expired' ? '2031-01-01' : null });
    if (status === 'draft') return est;
    if (status === 'expired') {
      await expireEstimates(t.services, new Date('2031-01-02T00:10:00Z'), org.orgId);
      return est;
    }
    await sendEstimate(t, org, est._id);
    if (status === 'accepted') await accept(t, org, est._id);
    if (status === 'declined')
      await readOutput(await post(t, org, `/${est._id}/decline`), TOOL.decline_estimate);
    return est;
  }

  test('draft -> sent: sent_at and an issue date, and a sent estimate may be sent again', async ({
    t,
    org,
  }) => {
    const est = await create(t, org);
    const sent = await sendEstimate(t, org, est._id);
    expect(sent.status).toBe('sent');
    expect(sent.sent_at).not.toBeNull();
    expect(sent.issue_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const again = await sendEstimate(t, org, est._id);
    expect(again.status).toBe('sent');
  });

  test('sent -> accepted, and accepting again changes nothing', async ({ t, org }) => {
    const est = await inState(t, org, 'sent');
    const accepted = await accept(t, org, est._id);
    expect(accepted.status).toBe('accepted');
    expect(accepted.accepted_at).not.toBeNull();
    expect(await accept(t, org, est._id)).toEqual(accepted);
  });

  test('sent -> declined with a reason', async ({ t, org }) => {
    const est = await inState(t, org, 'sent');
    const declined = (
      await readOutput(
        await post(t, org, `/${est._id}/decline`, { reason: 'Too expensive' }),
        TOOL.decline_estimate,
      )
    ).estimate;
    expect(declined).toMatchObject({ status: 'declined', decline_reason: 'Too expensive' });
    expect(declined.declined_at).not.toBeNull();
  });

  test.for([
    ['draft', 'accept'],
    ['draft', 'decline'],
    ['accepted', 'decline'],
    ['accepted', 'send'],
    ['declined', 'accept'],
    ['declined', 'send'],
    ['expired', 'send'],
    ['expired', 'accept'],
    ['expired', 'decline'],
  ] as const)('refuses %s -> %s', async ([from, move], { t, org }) => {
    const est = await inState(t, org, from);
    await expectRefused(
      await post(t, org, `/${est._id}/${move}`, move === 'send' ? { to: 'a@example.test' } : {}),
    );
  });

  test.for(['accepted', 'declined', 'expired'] as const)(
    'refuses editing and deleting a %s estimate',
    async (from, { t, org }) => {
      const est = await inState(t, org, from);
      await expectRefused(
        await t.request('PATCH', `/api/v1/estimates/${est._id}`, { token: org.token, body: { notes: 'x' } }),
      );
      await expectRefused(await t.request('DELETE', `/api/v1/estimates/${est._id}`, { token: org.token }));
    },
  );
});

describe('send', () => {
  test("mails the estimate's contact by default, and asks for `to` when the lead has no e-mail", async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org);
    const bare = await create(t, org, { lead_id: lead._id });
    expect(detailFields(await readError(await post(t, org, `/${bare._id}/send`), 400))).toEqual(['to']);
    const first = await createContact(t, org, {
      lead_id: lead._id,
      emails: [{ email: 'first@example.test' }],
    });
    const second = await createContact(t, org, {
      lead_id: lead._id,
      emails: [{ email: 'second@example.test' }],
    });
    const toLead = await readOutput(await post(t, org, `/${bare._id}/send`), TOOL.send_estimate);
    expect(toLead).toMatchObject({
      sent: true,
      mail: { to: 'first@example.test' },
      estimate: { number: bare.number },
    });
    const addressed = await create(t, org, { lead_id: lead._id, contact_id: second._id });
    const toContact = await readOutput(await post(t, org, `/${addressed._id}/send`), TOOL.send_estimate);
    expect(toContact.mail).toMatchObject({
      to: 'second@example.test',
      subject: `Estimate ${addressed.number} from Test Org`,
    });
    expect(toContact.estimate).toMatchObject({ total: addressed.total, currency: 'USD' });
    expect(first._id).not.toBe(second._id);
  });

  const mcpCall = (t: TestContext, org: { token: string }, name: string, args: Record<string, unknown>) =>
    callToolOverMcp(t, org, 'billing', name, args);

  test('over MCP previews without confirm: true and sends nothing, then sends with it', async ({
    t,
    org,
  }) => {
    const est = await create(t, org);
    const preview = await mcpCall(t, org, 'send_estimate', { id: est._id, to: 'buyer@example.test' });
    expect(preview.isError).not.toBe(true);
    expect(preview.structuredContent).toMatchObject({
      sent: false,
      preview: {
        to: ['buyer@example.test'],
        amounts: [{ label: 'total', amount: est.total, currency: 'USD' }],
        attachments: [`${est.number}.pdf`],
      },
    });
    const unchanged = await readOutput(
      await t.request('GET', `/api/v1/estimates/${est._id}`, { token: org.token }),
      TOOL.get_estimate,
    );
    expect(unchanged.estimate).toEqual(est);
    const sent = await mcpCall(t, org, 'send_estimate', {
      id: est._id,
      to: 'buyer@example.test',
      confirm: true,
    });
    expect(sent.structuredContent).toMatchObject({ sent: true, estimate: { status: 'sent' } });
  });
});

describe('convert to invoice', () => {
  test('makes a draft invoice with the same lead, contact, deal, currency, lines and notes, once', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org);
    const contact = await createContact(t, org, { lead_id: lead._id });
    const deal = await createOpportunity(t, org, { lead_id: lead._id });
    const est = await create(t, org, {
      lead_id: lead._id,
      contact_id: contact._id,
      opportunity_id: deal._id,
      currency: 'EUR',
      notes: 'Phase one',
    });
    await sendEstimate(t, org, est._id);
    await expectRefused(await post(t, org, `/${est._id}/convert-to-invoice`));
    await accept(t, org, est._id);
    const { invoice } = await readOutput(
      await post(t, org, `/${est._id}/convert-to-invoice`),
      TOOL.convert_estimate_to_invoice,
      201,
    );
    expect(invoice).toMatchObject({
      status: 'draft',
      number: null,
      lead_id: lead._id,
      contact_id: contact._id,
      opportunity_id: deal._id,
      currency: 'EUR',
      notes: 'Phase one',
      subtotal: est.subtotal,
      tax_total: est.tax_total,
      total: est.total,
    });
    expect(invoice.line_items).toEqual(est.line_items);
    expect((await eventsOf(t, invoice._id, org.orgId)).map((e) => e.event)).toEqual(['invoice.created']);
    const got = await readOutput(
      await t.request('GET', `/api/v1/invoices/${invoice._id}`, { token: org.token }),
      TOOL.get_invoice,
    );
    expect(got.invoice).toEqual(invoice);
    const after = await readOutput(
      await t.request('GET', `/api/v1/estimates/${est._id}`, { token: org.token }),
      TOOL.get_estimate,
    );
    expect(after.estimate).toMatchObject({ status: 'accepted', invoice_id: invoice._id });

    const second = await readError(await post(t, org, `/${est._id}/convert-to-invoice`), 400);
    expect(second.code).toBe('invalid_operation');
    expect(detailFields(second)).toEqual(['invoice_id']);
    const invoices = await readOutput(
      await t.request('GET', `/api/v1/invoices?lead_id=${lead._id}`, { token: org.token }),
      TOOL.list_invoices,
    );
    expect(invoices.total).toBe(1);
  });

  test('leaves off the invoice a contact or deal trashed since the estimate was made', async ({ t, org }) => {
    const lead = await createLead(t, org);
    const contact = await createContact(t, org, { lead_id: lead._id });
    const deal = await createOpportunity(t, org, { lead_id: lead._id });
    const est = await create(t, org, {
      lead_id: lead._id,
      contact_id: contact._id,
      opportunity_id: deal._id,
    });
    await sendEstimate(t, org, est._id, 'buyer@example.test');
    await accept(t, org, est._id);
    expect((await t.request('DELETE', `/api/v1/contacts/${contact._id}`, { token: org.token })).status).toBe(
      200,
    );
    expect(
      (await t.request('DELETE', `/api/v1/opportunities/${deal._id}`, { token: org.token })).status,
    ).toBe(200);
    const { invoice } = await readOutput(
      await post(t, org, `/${est._id}/convert-to-invoice`),
      TOOL.convert_estimate_to_invoice,
      201,
    );
    expect(invoice).toMatchObject({
      lead_id: lead._id,
      contact_id: null,
      opportunity_id: null,
      total: est.total,
    });
  });

  test('refuses a draft estimate', async ({ t, org }) => {
    const est = await create(t, org);
    await expectRefused(await post(t, org, `/${est._id}/convert-to-invoice`));
  });
});

describe('expiry job', () => {
  test('expires draft and sent estimates past valid_until (UTC day), leaves the rest, and is idempotent', async ({
    t,
    org,
  }) => {
    const fresh = await t.createOrg({ name: 'Expiry', plan: 'pro' });
    const mk = (valid_until: string | null) => createEstimate(t, fresh, { valid_until });
    const pastDraft = await mk('2032-05-09');
    const pastSent = await mk('2032-05-01');
    await sendEstimate(t, fresh, pastSent._id);
    const pastAccepted = await mk('2032-05-01');
    await sendEstimate(t, fresh, pastAccepted._id);
    await accept(t, org, pastAccepted._id, fresh);
    const today = await mk('2032-05-10');
    const open = await mk(null);

    const now = new Date('2032-05-10T23:59:00Z');
    const expired = await expireEstimates(t.services, now, fresh.orgId);
    expect(expired.sort()).toEqual([pastDraft._id, pastSent._id].sort());
    const status = async (id: string) =>
      (
        await readOutput(
          await t.request('GET', `/api/v1/estimates/${id}`, { token: fresh.token }),
          TOOL.get_estimate,
        )
      ).estimate;
    expect(await status(pastDraft._id)).toMatchObject({ status: 'expired', expired_at: now.toISOString() });
    expect((await status(pastSent._id)).status).toBe('expired');
    expect((await status(pastAccepted._id)).status).toBe('accepted');
    expect((await status(today._id)).status).toBe('draft');
    expect((await status(open._id)).status).toBe('draft');

    // A rerun (every organization) finds nothing of this organization left to move.
    const rerun = await expireEstimates(t.services, now);
    expect(rerun).not.toContain(pastDraft._id);
    expect(rerun).not.toContain(pastSent._id);
    // The next day, today's becomes expired.
    expect(await expireEstimates(t.services, new Date('2032-05-11T00:10:00Z'), fresh.orgId)).toEqual([
      today._id,
    ]);
  });
});

describe('list', () => {
  test('filters by status, lead and issue date, searches number and notes, sorts and pages', async ({
    t,
  }) => {
    const fresh = await t.createOrg({ name: 'Listing', plan: 'pro' });
    const lead = await createLead(t, fresh);
    const a = await createEstimate(t, fresh, {
      lead_id: lead._id,
      notes: 'Quarterly retainer',
      issue_date: '2031-01-10',
    });
    const b = await createEstimate(t, fresh, {
      issue_date: '2031-02-10',
      line_items: [{ description: 'x', quantity: 1, unit_price: 5 }],
    });
    await sendEstimate(t, fresh, b._id);
    const list = async (query: string) =>
      readOutput(
        await t.request('GET', `/api/v1/estimates${query}`, { token: fresh.token }),
        TOOL.list_estimates,
      );
    const ids = async (query: string) => (await list(query)).estimates.map((e) => e._id);
    expect(await ids('?status=draft')).toEqual([a._id]);
    expect(await ids('?status=sent')).toEqual([b._id]);
    expect(await ids(`?lead_id=${lead._id}`)).toEqual([a._id]);
    expect(await ids('?issue_date_from=2031-02-01')).toEqual([b._id]);
    expect(await ids('?issue_date_to=2031-01-31')).toEqual([a._id]);
    expect(await ids('?search=quarter')).toEqual([a._id]);
    expect(await ids(`?search=${b.number}`)).toEqual([b._id]);
    expect(await ids('?search=EST-00000')).toHaveLength(2);
    expect(await ids('?sort=total')).toEqual([b._id, a._id]);
    const page = await list('?limit=1&page=2&sort=-total');
    expect(page).toMatchObject({ total: 2, page: 2, limit: 1, totalPages: 2 });
    expect(page.estimates.map((e) => e._id)).toEqual([b._id]);
    expect((await t.request('GET', '/api/v1/estimates?sort=notes', { token: fresh.token })).status).toBe(400);
    expect((await t.request('GET', '/api/v1/estimates?status=open', { token: fresh.token })).status).toBe(
      400,
    );
  });
});

describe('access', () => {
  const estimateRoutes = ROUTES.filter((r) => r.path.startsWith('/estimates'));

  test('covers every estimate route with the plan feature', () => {
    expect(estimateRoutes.length).toBeGreaterThanOrEqual(10);
    for (const r of estimateRoutes) expect(r.tool.access.feature, `${r.method} ${r.path}`).toBe('estimates');
  });

  test('answers 402 plan_upgrade_required on the free plan for every estimate route', async ({ t, org }) => {
    const free = await t.createOrg({ name: 'Free', plan: 'free' });
    const est = await create(t, org);
    const body402 = z.looseObject({ error: z.string(), feature: z.string(), current_plan: z.string() });
    for (const r of estimateRoutes) {
      const path = `/api/v1${r.path.replace(':id', est._id)}`;
      const res = await t.request(r.method, path, {
        token: free.token,
        ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { body: {} }),
      });
      expect(res.status, `${r.method} ${r.path}`).toBe(402);
      expect(await readJson(res, body402)).toMatchObject({
        error: 'plan_upgrade_required',
        feature: 'estimates',
        current_plan: 'free',
      });
    }
  });

  test('answers 402 feature_disabled when the organization switched estimates off', async ({ t }) => {
    const off = await t.createOrg({ name: 'Switched off', plan: 'pro' });
    await t.services.db.system
      .update(organizations)
      .set({ disabledFeatures: ['estimates'] })
      .where(eq(organizations.id, off.orgId));
    const res = await t.request('GET', '/api/v1/estimates', { token: off.token });
    expect(res.status).toBe(402);
    expect((await readError(res, 402)).error).toBe('feature_disabled');
  });

  test('lets viewers read but not create or send, and members not delete', async ({ t, org }) => {
    const est = await create(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await t.request('GET', `/api/v1/estimates/${est._id}`, { token: viewer.token })).status).toBe(
      200,
    );
    expect(
      (await post(t, org, '', { lead_id: est.lead_id, currency: 'USD', line_items: ESTIMATE_LINES }, viewer))
        .status,
    ).toBe(403);
    expect((await post(t, org, `/${est._id}/send`, { to: 'a@example.test' }, viewer)).status).toBe(403);
    const member = await t.createUser(org.orgId, 'member');
    expect(
      (await post(t, org, '', { lead_id: est.lead_id, currency: 'USD', line_items: ESTIMATE_LINES }, member))
        .status,
    ).toBe(201);
    expect((await t.request('DELETE', `/api/v1/estimates/${est._id}`, { token: member.token })).status).toBe(
      403,
    );
  });

  test('needs read:invoices / write:invoices on a key', async ({ t, org }) => {
    const est = await create(t, org);
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:invoices']);
    expect((await t.request('GET', `/api/v1/estimates/${est._id}`, { token: reader.token })).status).toBe(
      200,
    );
    expect((await post(t, org, `/${est._id}/send`, { to: 'a@example.test' }, reader)).status).toBe(403);
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:invoices', 'write:invoices']);
    expect(
      (await post(t, org, '', { lead_id: est.lead_id, currency: 'USD', line_items: ESTIMATE_LINES }, writer))
        .status,
    ).toBe(201);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    expect((await t.request('GET', '/api/v1/estimates', { token: leadsOnly.token })).status).toBe(403);
  });

  test('declares honest MCP annotations in the billing toolset', () => {
    const a = (name: keyof typeof TOOL) => TOOL[name].annotations;
    expect(TOOL.list_estimates.toolset).toBe('billing');
    expect(a('list_estimates')).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(a('delete_estimate')).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(a('send_estimate')).toMatchObject({
      openWorldHint: true,
      idempotentHint: false,
      destructiveHint: false,
    });
    expect(a('convert_estimate_to_invoice')).toMatchObject({ idempotentHint: false, readOnlyHint: false });
  });
});
