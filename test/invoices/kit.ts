// The test kit of tools/invoices (test/README.md "Test kits"): its status machine moves through its
// own routes (finalize, payments, void, mark-uncollectible) and an edit for draft.

import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { flagOverdue } from '../../tools/invoices/jobs.ts';
import { invoices } from '../../tools/invoices/tables.ts';
import { createInvoice } from '../fixtures/invoices.ts';
import { defineKit, type KitScope, NO_BODY } from '../fixtures/kit.ts';
import { createAt, createLeadOver, insertLead, readAt, sendOk } from '../fixtures/kit-helpers.ts';

const LINE_ITEMS = [{ description: 'Work', quantity: 1, unit_price: 10 }];

/** The request that moves an invoice to `to`: its own route, or an edit (which needs a draft). */
async function moveInvoice(scope: KitScope, id: string, to: string): Promise<Response> {
  const { t, org } = scope;
  const base = `/api/v1/invoices/${id}`;
  if (to === 'draft') return t.request('PATCH', base, { token: org.token, body: {} });
  if (to === 'open') return t.request('POST', `${base}/finalize`, { token: org.token });
  if (to === 'void') return t.request('POST', `${base}/void`, { token: org.token });
  if (to === 'uncollectible') return t.request('POST', `${base}/mark-uncollectible`, { token: org.token });
  const due = Number((await readAt(scope, base, 'invoice')).amount_due);
  return t.request('POST', `${base}/payments`, { token: org.token, body: { amount: due > 0 ? due : 1 } });
}

export const kit = defineKit({
  area: 'invoices',
  bodies: {
    create_invoice: {
      body: { lead_id: '', currency: 'USD', line_items: LINE_ITEMS, notes: 'n' },
      text: 'notes',
    },
    update_invoice: { body: { notes: 'n' }, text: 'notes' },
    delete_invoice: NO_BODY,
    finalize_invoice: NO_BODY,
    record_invoice_payment: { body: { amount: 10, method: 'card' }, text: 'method' },
    void_invoice: NO_BODY,
    mark_invoice_uncollectible: NO_BODY,
    send_invoice: { body: { message: 'Hello' }, text: 'message' },
  },
  victims: {
    '/invoices': async ({ t, org }) => {
      const leadId = await insertLead({ t }, org);
      const id = newId();
      await t.services.db.system.insert(invoices).values({
        id,
        orgId: org.orgId,
        leadId,
        currency: 'USD',
        lineItems: LINE_ITEMS,
        subtotalMinor: 1000n,
        taxTotalMinor: 0n,
        totalMinor: 1000n,
      });
      return { id, read: () => t.services.db.system.select().from(invoices).where(eq(invoices.id, id)) };
    },
  },
  machines: {
    invoice: {
      moves:
        'draft -> open; open -> paid (invoice.paid), void, uncollectible; paid (final); void (final); uncollectible -> paid (invoice.paid), void',
      field: 'status',
      noSameState: ['paid'],
      driver: (scope) => ({
        create: async () =>
          createAt(scope, '/api/v1/invoices', 'invoice', {
            lead_id: await createLeadOver(scope),
            currency: 'USD',
            line_items: LINE_ITEMS,
          }),
        move: (id, to) => moveInvoice(scope, id, to),
        read: (id) => readAt(scope, `/api/v1/invoices/${id}`, 'invoice'),
        stateOf: (record) => String(record.status),
      }),
    },
  },
  // invoice.created, invoice.sent, invoice.overdue (the job), invoice.paid.
  events: async (scope) => {
    const { t, org } = scope;
    const invoice = await createInvoice(t, org, {
      lead_id: await createLeadOver(scope),
      issue_date: '2026-01-02',
      due_date: '2026-01-31',
      line_items: [{ description: 'Retainer', quantity: 1, unit_price: 100 }],
    });
    await sendOk(scope, 'POST', `/api/v1/invoices/${invoice._id}/send`, { to: 'billing@customer.example' });
    expect(await flagOverdue(t.services, new Date('2026-02-02T00:10:00Z'), org.orgId)).toBe(1);
    await sendOk(scope, 'POST', `/api/v1/invoices/${invoice._id}/payments`, { amount: 100 });
  },
});
