// Locks in invoices over REST: drafts with priced lines, merge updates only while draft, delete of
// drafts, finalize with per-organization gap-free numbers, payments (partial, full, overpay), every
// allowed and refused status move, list filters/search/sort/paging, references of the lead, roles and scopes.
import { describe, expect } from 'vitest';
import {
  type Caller,
  createContact,
  createLead,
  createOpportunity,
  detailFields,
  fileTest,
  eventsOf as outboxEventsOf,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

const LINES = [
  { description: 'Consulting', quantity: 2, unit_price: 100, tax_percent: 10 },
  { description: 'Setup', quantity: 1, unit_price: 50.5, discount_percent: 10 },
];

async function create(t: TestContext, org: TestOrg, body: Record<string, unknown> = {}, as: Caller = org) {
  const leadId = typeof body.lead_id === 'string' ? body.lead_id : (await createLead(t, as))._id;
  const res = await t.request('POST', '/api/v1/invoices', {
    token: as.token,
    body: { currency: 'USD', line_items: LINES, ...body, lead_id: leadId },
  });
  return (await readOutput(res, TOOL.create_invoice, 201)).invoice;
}

const post = (t: TestContext, org: TestOrg, path: string, body: unknown = {}, as: Caller = org) =>
  t.request('POST', `/api/v1/invoices${path}`, { token: as.token, body });

async function finalize(t: TestContext, org: TestOrg, id: string) {
  return (await readOutput(await post(t, org, `/${id}/finalize`), TOOL.finalize_invoice)).invoice;
}
async function pay(t: TestContext, org: TestOrg, id: string, amount: number) {
  return (
    await readOutput(await post(t, org, `/${id}/payments`, { amount }), TOOL.record_invoice_payment, 201)
  ).invoice;
}
async function expectRefused(res: Response) {
  const body = await readError(res, 400);
  expect(body.code).toBe('invalid_transition');
}

describe('create, get, update, delete', () => {
  test('creates a priced draft with no number and emits invoice.created', async ({ t, org }) => {
    const inv = await create(t, org, { notes: 'First' });
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

  test('refuses a unit price with more decimals than the currency, naming the line', async ({ t, org }) => {
    const lead = await createLead(t, org);
    const res = await post(t, org, '', {
      lead_id: lead._id,
      currency: 'JPY',
      line_items: [
        { description: 'x', quantity: 1, unit_price: 1 },
        { description: 'y', quantity: 1, unit_price: 1.5 },
      ],
    });
    expect(detailFields(await readError(res, 400))).toEqual(['line_items.1.unit_price']);
  });

  test('needs a live lead of the organization, and a contact and deal of that lead', async ({
    t,
    org,
    other,
  }) => {
    const foreign = await createLead(t, other);
    expect(
      (await post(t, org, '', { lead_id: foreign._id, currency: 'USD', line_items: LINES })).status,
    ).toBe(404);
    const lead = await createLead(t, org);
    const otherLead = await createLead(t, org);
    const contact = await createContact(t, org, { lead_id: otherLead._id });
    const deal = await createOpportunity(t, org, { lead_id: otherLead._id });
    const res = await post(t, org, '', {
      lead_id: lead._id,
      currency: 'USD',
      line_items: LINES,
      contact_id: contact._id,
      opportunity_id: deal._id,
    });
    expect(detailFields(await readError(res, 400))).toEqual(['contact_id', 'opportunity_id']);
    const ok = await create(t, org, {
      lead_id: otherLead._id,
      contact_id: contact._id,
      opportunity_id: deal._id,
    });
    expect(ok).toMatchObject({ contact_id: contact._id, opportunity_id: deal._id });
  });

  test('merges PATCH and PUT into a draft and reprices the lines', async ({ t, org }) => {
    const inv = await create(t, org, { notes: 'a', due_date: '2030-01-31' });
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

  test('deletes a draft for good; a finalized invoice cannot be edited or deleted', async ({ t, org }) => {
    const draft = await create(t, org);
    expect((await t.request('DELETE', `/api/v1/invoices/${draft._id}`, { token: org.token })).status).toBe(
      200,
    );
    expect((await t.request('GET', `/api/v1/invoices/${draft._id}`, { token: org.token })).status).toBe(404);

    const open = await create(t, org);
    await finalize(t, org, open._id);
    await expectRefused(
      await t.request('PATCH', `/api/v1/invoices/${open._id}`, { token: org.token, body: { notes: 'x' } }),
    );
    await expectRefused(await t.request('DELETE', `/api/v1/invoices/${open._id}`, { token: org.token }));
  });

  test('answers 404 to another organization', async ({ t, org, other }) => {
    const inv = await create(t, org);
    expect((await t.request('GET', `/api/v1/invoices/${inv._id}`, { token: other.token })).status).toBe(404);
  });
});

describe('numbering', () => {
  test('numbers finalized invoices INV-000001, INV-000002... per organization, lines frozen', async ({
    t,
    org,
  }) => {
    const fresh = await t.createOrg({ name: 'Numbering' });
    const a = await create(t, org, {}, fresh);
    const b = await create(t, org, {}, fresh);
    const first = (
      await readOutput(await post(t, org, `/${b._id}/finalize`, {}, fresh), TOOL.finalize_invoice)
    ).invoice;
    const second = (
      await readOutput(await post(t, org, `/${a._id}/finalize`, {}, fresh), TOOL.finalize_invoice)
    ).invoice;
    expect([first.number, second.number]).toEqual(['INV-000001', 'INV-000002']);
    expect(first).toMatchObject({ status: 'open', total: b.total });
    expect(first.finalized_at).not.toBeNull();
    expect(first.issue_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // Finalizing again changes nothing and takes no number.
    const again = (
      await readOutput(await post(t, org, `/${b._id}/finalize`, {}, fresh), TOOL.finalize_invoice)
    ).invoice;
    expect(again.number).toBe('INV-000001');
    // Another organization starts at 1 too.
    const elsewhere = await t.createOrg({ name: 'Numbering 2' });
    const c = await create(t, org, {}, elsewhere);
    const numbered = (
      await readOutput(await post(t, org, `/${c._id}/finalize`, {}, elsewhere), TOOL.finalize_invoice)
    ).invoice;
    expect(numbered.number).toBe('INV-000001');
  });
});

describe('payments', () => {
  test('records partial payments, then paid at the total with invoice.paid', async ({ t, org }) => {
    const inv = await create(t, org, { line_items: [{ description: 'x', quantity: 1, unit_price: 100 }] });
    await finalize(t, org, inv._id);
    const part = await pay(t, org, inv._id, 40.25);
    expect(part).toMatchObject({ status: 'open', amount_paid: 40.25, amount_due: 59.75, paid_at: null });
    expect(part.payments).toHaveLength(1);
    const overpay = await post(t, org, `/${inv._id}/payments`, { amount: 59.76 });
    expect(detailFields(await readError(overpay, 400))).toEqual(['amount']);
    const paid = await pay(t, org, inv._id, 59.75);
    expect(paid).toMatchObject({ status: 'paid', amount_paid: 100, amount_due: 0 });
    expect(paid.paid_at).not.toBeNull();
    const events = (await outboxEventsOf(t, inv._id, org.orgId)).map((e) => e.event);
    expect(events).toEqual(['invoice.created', 'invoice.paid']);
    await expectRefused(await post(t, org, `/${inv._id}/payments`, { amount: 1 }));
  });

  test('is paid when the completing payment was made, not when it was recorded', async ({ t, org }) => {
    const inv = await create(t, org, { line_items: [{ description: 'x', quantity: 1, unit_price: 10 }] });
    await finalize(t, org, inv._id);
    const res = await post(t, org, `/${inv._id}/payments`, {
      amount: 10,
      paid_at: '2026-01-15T09:30:00.000Z',
    });
    const paid = (await readOutput(res, TOOL.record_invoice_payment, 201)).invoice;
    expect(paid).toMatchObject({ status: 'paid', paid_at: '2026-01-15T09:30:00.000Z' });
  });

  test('refuses a payment on a draft and more decimals than the currency', async ({ t, org }) => {
    const inv = await create(t, org);
    await expectRefused(await post(t, org, `/${inv._id}/payments`, { amount: 1 }));
    await finalize(t, org, inv._id);
    expect(
      detailFields(await readError(await post(t, org, `/${inv._id}/payments`, { amount: 1.001 }), 400)),
    ).toEqual(['amount']);
  });
});

describe('status moves', () => {
  /** An invoice brought to `status` through the API. */
  async function inState(
    t: TestContext,
    org: TestOrg,
    status: 'draft' | 'open' | 'paid' | 'void' | 'uncollectible',
  ) {
    const inv = await create(t, org, { line_items: [{ description: 'x', quantity: 1, unit_price: 10 }] });
    if (status === 'draft') return inv._id;
    await finalize(t, org, inv._id);
    if (status === 'paid') await pay(t, org, inv._id, 10);
    if (status === 'void') await readOutput(await post(t, org, `/${inv._id}/void`), TOOL.void_invoice);
    if (status === 'uncollectible') {
      await readOutput(await post(t, org, `/${inv._id}/mark-uncollectible`), TOOL.mark_invoice_uncollectible);
    }
    return inv._id;
  }

  test.for(['open', 'uncollectible'] as const)('%s -> void', async (from, { t, org }) => {
    const id = await inState(t, org, from);
    const res = (await readOutput(await post(t, org, `/${id}/void`), TOOL.void_invoice)).invoice;
    expect(res.status).toBe('void');
    expect(res.voided_at).not.toBeNull();
  });

  test('open -> uncollectible -> paid', async ({ t, org }) => {
    const id = await inState(t, org, 'uncollectible');
    expect((await pay(t, org, id, 10)).status).toBe('paid');
  });

  test.for([
    ['draft', 'void'],
    ['paid', 'void'],
    ['draft', 'mark-uncollectible'],
    ['paid', 'mark-uncollectible'],
    ['void', 'mark-uncollectible'],
    ['paid', 'finalize'],
    ['void', 'finalize'],
    ['uncollectible', 'finalize'],
  ] as const)('refuses %s -> %s', async ([from, move], { t, org }) => {
    const id = await inState(t, org, from);
    await expectRefused(await post(t, org, `/${id}/${move}`));
  });

  test('refuses payments on void invoices and edits after finalizing', async ({ t, org }) => {
    const id = await inState(t, org, 'void');
    await expectRefused(await post(t, org, `/${id}/payments`, { amount: 1 }));
    await expectRefused(
      await t.request('PUT', `/api/v1/invoices/${id}`, { token: org.token, body: { notes: 'x' } }),
    );
  });
});

describe('list', () => {
  test('filters by status, lead, overdue and issue date, searches number and notes, sorts and pages', async ({
    t,
    org,
  }) => {
    const fresh = await t.createOrg({ name: 'Listing' });
    const lead = await createLead(t, fresh);
    const a = await create(
      t,
      org,
      { lead_id: lead._id, notes: 'Quarterly retainer', issue_date: '2030-01-10' },
      fresh,
    );
    const b = await create(
      t,
      org,
      { issue_date: '2030-02-10', line_items: [{ description: 'x', quantity: 1, unit_price: 5 }] },
      fresh,
    );
    const n = (await readOutput(await post(t, org, `/${b._id}/finalize`, {}, fresh), TOOL.finalize_invoice))
      .invoice;
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

describe('list totals from the live-count ledger', () => {
  test('follow finalize, payment, void, uncollectible and draft deletion, by status and overall', async ({
    t,
    org,
  }) => {
    const fresh = await t.createOrg({ name: 'Counted' });
    const lead = await createLead(t, fresh);
    const make = () => create(t, org, { lead_id: lead._id }, fresh);
    const [paid, voided, lost, open, draft, gone] = [
      await make(),
      await make(),
      await make(),
      await make(),
      await make(),
      await make(),
    ];
    for (const inv of [paid, voided, lost, open]) await finalize(t, fresh, inv._id);
    await readOutput(
      await post(t, org, `/${paid._id}/payments`, { amount: paid.total }, fresh),
      TOOL.record_invoice_payment,
      201,
    );
    await readOutput(await post(t, org, `/${voided._id}/void`, {}, fresh), TOOL.void_invoice);
    await readOutput(
      await post(t, org, `/${lost._id}/mark-uncollectible`, {}, fresh),
      TOOL.mark_invoice_uncollectible,
    );
    expect((await t.request('DELETE', `/api/v1/invoices/${gone._id}`, { token: fresh.token })).status).toBe(
      200,
    );
    expect(draft.status).toBe('draft');

    const total = async (query: string) =>
      (
        await readOutput(
          await t.request('GET', `/api/v1/invoices${query}`, { token: fresh.token }),
          TOOL.list_invoices,
        )
      ).total;
    expect(await total('')).toBe(5);
    expect(await total('?status=draft')).toBe(1);
    expect(await total('?status=open')).toBe(1);
    expect(await total('?status=paid')).toBe(1);
    expect(await total('?status=void')).toBe(1);
    expect(await total('?status=uncollectible')).toBe(1);
    // Another filter beside status is counted, not read from the ledger.
    expect(await total(`?status=open&lead_id=${lead._id}`)).toBe(1);
    expect(await total('?status=open&is_overdue=true')).toBe(0);
    // Another organization's invoices never move these totals.
    await create(t, org);
    expect(await total('')).toBe(5);
  });
});

describe('access', () => {
  test('lets viewers read but not write, and members not delete', async ({ t, org }) => {
    const inv = await create(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await t.request('GET', `/api/v1/invoices/${inv._id}`, { token: viewer.token })).status).toBe(200);
    expect((await post(t, org, `/${inv._id}/finalize`, {}, viewer)).status).toBe(403);
    const member = await t.createUser(org.orgId, 'member');
    expect((await t.request('DELETE', `/api/v1/invoices/${inv._id}`, { token: member.token })).status).toBe(
      403,
    );
  });

  test('needs read:invoices / write:invoices on a key', async ({ t, org }) => {
    const inv = await create(t, org);
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:invoices']);
    expect((await t.request('GET', `/api/v1/invoices/${inv._id}`, { token: reader.token })).status).toBe(200);
    expect((await post(t, org, `/${inv._id}/finalize`, {}, reader)).status).toBe(403);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await t.request('GET', '/api/v1/invoices', { token: leadsOnly.token })).status).toBe(403);
  });
});
