// Locks in invoices over REST: drafts with priced lines, merge updates only while draft, delete of
// drafts, finalize with per-organization gap-free numbers, payments (partial, full, overpay), every
// allowed and refused status move, list filters/search/sort/paging, references of the lead, roles and scopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Caller,
  createContact,
  createLead,
  createOpportunity,
  createTestContext,
  detailFields,
  eventsOf as outboxEventsOf,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

let t: TestContext;
let org: TestOrg;
let other: TestOrg;

beforeAll(async () => {
  t = await createTestContext({}, { withoutRateLimits: true });
  org = await t.createOrg();
  other = await t.createOrg({ name: 'Other Org' });
});
afterAll(() => t.close());

const LINES = [
  { description: 'Consulting', quantity: 2, unit_price: 100, tax_percent: 10 },
  { description: 'Setup', quantity: 1, unit_price: 50.5, discount_percent: 10 },
];

async function create(body: Record<string, unknown> = {}, as: Caller = org) {
  const leadId = typeof body.lead_id === 'string' ? body.lead_id : (await createLead(t, as))._id;
  const res = await t.request('POST', '/api/v1/invoices', {
    token: as.token,
    body: { currency: 'USD', line_items: LINES, ...body, lead_id: leadId },
  });
  return (await readOutput(res, TOOL.create_invoice, 201)).invoice;
}

const post = (path: string, body: unknown = {}, as: Caller = org) =>
  t.request('POST', `/api/v1/invoices${path}`, { token: as.token, body });

async function finalize(id: string) {
  return (await readOutput(await post(`/${id}/finalize`), TOOL.finalize_invoice)).invoice;
}
async function pay(id: string, amount: number) {
  return (await readOutput(await post(`/${id}/payments`, { amount }), TOOL.record_invoice_payment, 201))
    .invoice;
}
async function expectRefused(res: Response) {
  const body = await readError(res, 400);
  expect(body.code).toBe('invalid_transition');
}

describe('create, get, update, delete', () => {
  it('creates a priced draft with no number and emits invoice.created', async () => {
    const inv = await create({ notes: 'First' });
    expect(inv).toMatchObject({
      status: 'draft',
      number: null,
      currency: 'USD',
      subtotal: 245.45,
      tax_total: 20,
      total: 265.45,
      amount_paid: 0,
      amount_due: 265.45,
      notes: 'First',
    });
    expect(inv.line_items[0]).toMatchObject({ amount: 200, tax_amount: 20, discount_percent: 0 });
    expect(inv.line_items[1]).toMatchObject({ amount: 45.45, tax_amount: 0 });
    const got = await readOutput(
      await t.request('GET', `/api/v1/invoices/${inv._id}`, { token: org.token }),
      TOOL.get_invoice,
    );
    expect(got.invoice).toEqual(inv);
    expect((await outboxEventsOf(t, inv._id, org.orgId)).map((e) => e.event)).toEqual(['invoice.created']);
  });

  it('refuses a unit price with more decimals than the currency, naming the line', async () => {
    const lead = await createLead(t, org);
    const res = await post('', {
      lead_id: lead._id,
      currency: 'JPY',
      line_items: [
        { description: 'x', quantity: 1, unit_price: 1 },
        { description: 'y', quantity: 1, unit_price: 1.5 },
      ],
    });
    expect(detailFields(await readError(res, 400))).toEqual(['line_items.1.unit_price']);
  });

  it('needs a live lead of the organization, and a contact and deal of that lead', async () => {
    const foreign = await createLead(t, other);
    expect((await post('', { lead_id: foreign._id, currency: 'USD', line_items: LINES })).status).toBe(404);
    const lead = await createLead(t, org);
    const otherLead = await createLead(t, org);
    const contact = await createContact(t, org, { lead_id: otherLead._id });
    const deal = await createOpportunity(t, org, { lead_id: otherLead._id });
    const res = await post('', {
      lead_id: lead._id,
      currency: 'USD',
      line_items: LINES,
      contact_id: contact._id,
      opportunity_id: deal._id,
    });
    expect(detailFields(await readError(res, 400))).toEqual(['contact_id', 'opportunity_id']);
    const ok = await create({ lead_id: otherLead._id, contact_id: contact._id, opportunity_id: deal._id });
    expect(ok).toMatchObject({ contact_id: contact._id, opportunity_id: deal._id });
  });

  it('merges PATCH and PUT into a draft and reprices the lines', async () => {
    const inv = await create({ notes: 'a', due_date: '2030-01-31' });
    const patched = await readOutput(
      await t.request('PATCH', `/api/v1/invoices/${inv._id}`, {
        token: org.token,
        body: { line_items: [{ description: 'One', quantity: 3, unit_price: 10 }] },
      }),
      TOOL.update_invoice,
    );
    expect(patched.invoice).toMatchObject({ notes: 'a', due_date: '2030-01-31', total: 30, subtotal: 30 });
    const put = await readOutput(
      await t.request('PUT', `/api/v1/invoices/${inv._id}`, { token: org.token, body: { notes: null } }),
      TOOL.update_invoice,
    );
    expect(put.invoice).toMatchObject({ notes: null, total: 30 });
  });

  it('deletes a draft for good; a finalized invoice cannot be edited or deleted', async () => {
    const draft = await create();
    expect((await t.request('DELETE', `/api/v1/invoices/${draft._id}`, { token: org.token })).status).toBe(
      200,
    );
    expect((await t.request('GET', `/api/v1/invoices/${draft._id}`, { token: org.token })).status).toBe(404);

    const open = await create();
    await finalize(open._id);
    await expectRefused(
      await t.request('PATCH', `/api/v1/invoices/${open._id}`, { token: org.token, body: { notes: 'x' } }),
    );
    await expectRefused(await t.request('DELETE', `/api/v1/invoices/${open._id}`, { token: org.token }));
  });

  it('answers 404 to another organization', async () => {
    const inv = await create();
    expect((await t.request('GET', `/api/v1/invoices/${inv._id}`, { token: other.token })).status).toBe(404);
  });
});

describe('numbering', () => {
  it('numbers finalized invoices INV-000001, INV-000002... per organization, lines frozen', async () => {
    const fresh = await t.createOrg({ name: 'Numbering' });
    const a = await create({}, fresh);
    const b = await create({}, fresh);
    const first = (await readOutput(await post(`/${b._id}/finalize`, {}, fresh), TOOL.finalize_invoice))
      .invoice;
    const second = (await readOutput(await post(`/${a._id}/finalize`, {}, fresh), TOOL.finalize_invoice))
      .invoice;
    expect([first.number, second.number]).toEqual(['INV-000001', 'INV-000002']);
    expect(first).toMatchObject({ status: 'open', total: b.total });
    expect(first.finalized_at).not.toBeNull();
    expect(first.issue_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // Finalizing again changes nothing and takes no number.
    const again = (await readOutput(await post(`/${b._id}/finalize`, {}, fresh), TOOL.finalize_invoice))
      .invoice;
    expect(again.number).toBe('INV-000001');
    // Another organization starts at 1 too.
    const elsewhere = await t.createOrg({ name: 'Numbering 2' });
    const c = await create({}, elsewhere);
    const numbered = (
      await readOutput(await post(`/${c._id}/finalize`, {}, elsewhere), TOOL.finalize_invoice)
    ).invoice;
    expect(numbered.number).toBe('INV-000001');
  });
});

describe('payments', () => {
  it('records partial payments, then paid at the total with invoice.paid', async () => {
    const inv = await create({ line_items: [{ description: 'x', quantity: 1, unit_price: 100 }] });
    await finalize(inv._id);
    const part = await pay(inv._id, 40.25);
    expect(part).toMatchObject({ status: 'open', amount_paid: 40.25, amount_due: 59.75, paid_at: null });
    expect(part.payments).toHaveLength(1);
    const overpay = await post(`/${inv._id}/payments`, { amount: 59.76 });
    expect(detailFields(await readError(overpay, 400))).toEqual(['amount']);
    const paid = await pay(inv._id, 59.75);
    expect(paid).toMatchObject({ status: 'paid', amount_paid: 100, amount_due: 0 });
    expect(paid.paid_at).not.toBeNull();
    const events = (await outboxEventsOf(t, inv._id, org.orgId)).map((e) => e.event);
    expect(events).toEqual(['invoice.created', 'invoice.paid']);
    await expectRefused(await post(`/${inv._id}/payments`, { amount: 1 }));
  });

  it('is paid when the completing payment was made, not when it was recorded', async () => {
    const inv = await create({ line_items: [{ description: 'x', quantity: 1, unit_price: 10 }] });
    await finalize(inv._id);
    const res = await post(`/${inv._id}/payments`, { amount: 10, paid_at: '2026-01-15T09:30:00.000Z' });
    const paid = (await readOutput(res, TOOL.record_invoice_payment, 201)).invoice;
    expect(paid).toMatchObject({ status: 'paid', paid_at: '2026-01-15T09:30:00.000Z' });
  });

  it('refuses a payment on a draft and more decimals than the currency', async () => {
    const inv = await create();
    await expectRefused(await post(`/${inv._id}/payments`, { amount: 1 }));
    await finalize(inv._id);
    expect(detailFields(await readError(await post(`/${inv._id}/payments`, { amount: 1.001 }), 400))).toEqual(
      ['amount'],
    );
  });
});

describe('status moves', () => {
  /** An invoice brought to `status` through the API. */
  async function inState(status: 'draft' | 'open' | 'paid' | 'void' | 'uncollectible') {
    const inv = await create({ line_items: [{ description: 'x', quantity: 1, unit_price: 10 }] });
    if (status === 'draft') return inv._id;
    await finalize(inv._id);
    if (status === 'paid') await pay(inv._id, 10);
    if (status === 'void') await readOutput(await post(`/${inv._id}/void`), TOOL.void_invoice);
    if (status === 'uncollectible') {
      await readOutput(await post(`/${inv._id}/mark-uncollectible`), TOOL.mark_invoice_uncollectible);
    }
    return inv._id;
  }

  it.each(['open', 'uncollectible'] as const)('%s -> void', async (from) => {
    const id = await inState(from);
    const res = (await readOutput(await post(`/${id}/void`), TOOL.void_invoice)).invoice;
    expect(res.status).toBe('void');
    expect(res.voided_at).not.toBeNull();
  });

  it('open -> uncollectible -> paid', async () => {
    const id = await inState('uncollectible');
    expect((await pay(id, 10)).status).toBe('paid');
  });

  it.each([
    ['draft', 'void'],
    ['paid', 'void'],
    ['draft', 'mark-uncollectible'],
    ['paid', 'mark-uncollectible'],
    ['void', 'mark-uncollectible'],
    ['paid', 'finalize'],
    ['void', 'finalize'],
    ['uncollectible', 'finalize'],
  ] as const)('refuses %s -> %s', async (from, move) => {
    const id = await inState(from);
    await expectRefused(await post(`/${id}/${move}`));
  });

  it('refuses payments on void invoices and edits after finalizing', async () => {
    const id = await inState('void');
    await expectRefused(await post(`/${id}/payments`, { amount: 1 }));
    await expectRefused(
      await t.request('PUT', `/api/v1/invoices/${id}`, { token: org.token, body: { notes: 'x' } }),
    );
  });
});

describe('list', () => {
  it('filters by status, lead, overdue and issue date, searches number and notes, sorts and pages', async () => {
    const fresh = await t.createOrg({ name: 'Listing' });
    const lead = await createLead(t, fresh);
    const a = await create(
      { lead_id: lead._id, notes: 'Quarterly retainer', issue_date: '2030-01-10' },
      fresh,
    );
    const b = await create(
      { issue_date: '2030-02-10', line_items: [{ description: 'x', quantity: 1, unit_price: 5 }] },
      fresh,
    );
    const n = (await readOutput(await post(`/${b._id}/finalize`, {}, fresh), TOOL.finalize_invoice)).invoice;
    const list = async (query: string) =>
      readOutput(
        await t.request('GET', `/api/v1/invoices${query}`, { token: fresh.token }),
        TOOL.list_invoices,
      );
    expect((await list('?status=draft')).invoices.map((i) => i._id)).toEqual([a._id]);
    expect((await list(`?lead_id=${lead._id}`)).invoices.map((i) => i._id)).toEqual([a._id]);
    expect((await list('?is_overdue=true')).total).toBe(0);
    expect((await list('?is_overdue=false')).total).toBe(2);
    expect((await list('?issue_date_from=2030-02-01')).invoices.map((i) => i._id)).toEqual([b._id]);
    expect((await list('?issue_date_to=2030-01-31')).invoices.map((i) => i._id)).toEqual([a._id]);
    expect((await list('?search=quarter')).invoices.map((i) => i._id)).toEqual([a._id]);
    expect((await list(`?search=${n.number}`)).invoices.map((i) => i._id)).toEqual([b._id]);
    expect((await list('?sort=total')).invoices.map((i) => i._id)).toEqual([b._id, a._id]);
    const page = await list('?limit=1&page=2&sort=-total');
    expect(page).toMatchObject({ total: 2, page: 2, limit: 1, totalPages: 2 });
    expect(page.invoices.map((i) => i._id)).toEqual([b._id]);
    expect((await t.request('GET', '/api/v1/invoices?sort=notes', { token: fresh.token })).status).toBe(400);
  });
});

describe('access', () => {
  it('lets viewers read but not write, and members not delete', async () => {
    const inv = await create();
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await t.request('GET', `/api/v1/invoices/${inv._id}`, { token: viewer.token })).status).toBe(200);
    expect((await post(`/${inv._id}/finalize`, {}, viewer)).status).toBe(403);
    const member = await t.createUser(org.orgId, 'member');
    expect((await t.request('DELETE', `/api/v1/invoices/${inv._id}`, { token: member.token })).status).toBe(
      403,
    );
  });

  it('needs read:invoices / write:invoices on a key', async () => {
    const inv = await create();
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:invoices']);
    expect((await t.request('GET', `/api/v1/invoices/${inv._id}`, { token: reader.token })).status).toBe(200);
    expect((await post(`/${inv._id}/finalize`, {}, reader)).status).toBe(403);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await t.request('GET', '/api/v1/invoices', { token: leadsOnly.token })).status).toBe(403);
  });
});
