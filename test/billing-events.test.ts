// Locks in that every billing event (invoices, proposals, contracts) reaches a real HTTPS receiver, signed, about the record that changed.
import { describe, expect } from 'vitest';
import { CATALOGUE } from '../tools/index.ts';
import { flagOverdue } from '../tools/invoices/jobs.ts';
import { harnessTest } from './fixtures/harness-test.ts';
import {
  createInvoice,
  createLead,
  createProposal,
  decodeDelivery,
  readOutput,
  sendProposal,
  startEventReceiver,
  TOOL,
} from './fixtures/index.ts';
import type { ReceivedRequest } from './support/https-receiver.ts';

const SECRET = 'billing-events-secret-0123456789';
const BILLING_EVENTS = CATALOGUE.eventNames.filter((e) => /^(invoice|proposal|contract)\./.test(e));

const test = harnessTest(() =>
  startEventReceiver({ name: 'Billing', events: BILLING_EVENTS, secret: SECRET }),
).extend('receiver', { scope: 'file' }, async ({ harness }) => harness.receiver);

interface Delivered {
  event: string;
  id: unknown;
}

function decode(hit: ReceivedRequest): Delivered {
  const { event, data } = decodeDelivery(hit, SECRET);
  // A contract is no record of its own: contract.signed names the proposal it signs.
  if (event === 'contract.signed' && 'proposal_id' in data) return { event, id: data.proposal_id };
  if (!('_id' in data)) throw new Error(`${event} names no record`);
  return { event, id: data._id };
}

describe('billing events over webhooks', () => {
  test('delivers invoice.created, sent, overdue and paid, signed, about the invoice', async ({
    t,
    org,
    receiver,
  }) => {
    const lead = await createLead(t, org);
    const invoice = await createInvoice(t, org, {
      lead_id: lead._id,
      issue_date: '2026-01-02',
      due_date: '2026-01-31',
      line_items: [{ description: 'Retainer', quantity: 2, unit_price: 450, tax_percent: 10 }],
    });
    const sent = await t.request('POST', `/api/v1/invoices/${invoice._id}/send`, {
      token: org.token,
      body: { to: 'billing@customer.example' },
    });
    const open = (await readOutput(sent, TOOL.send_invoice)).invoice;
    expect(open?.status).toBe('open');
    expect(await flagOverdue(t.services, new Date('2026-02-02T00:10:00Z'), org.orgId)).toBe(1);
    const paid = await t.request('POST', `/api/v1/invoices/${invoice._id}/payments`, {
      token: org.token,
      body: { amount: 990 },
    });
    expect((await readOutput(paid, TOOL.record_invoice_payment, 201)).invoice.status).toBe('paid');

    const expected = ['invoice.created', 'invoice.sent', 'invoice.overdue', 'invoice.paid'];
    const hits = await receiver.waitForRequests(expected.length, 20_000);
    const delivered = hits.map(decode);
    expect(delivered.map((d) => d.event).sort()).toEqual([...expected].sort());
    for (const d of delivered) expect(d.id).toBe(invoice._id);
  });

  test('delivers proposal.sent, accepted, declined and contract.signed, signed, about the proposal', async ({
    t,
    org,
    receiver,
  }) => {
    receiver.reset();
    const signedOne = await createProposal(t, org);
    const { token: acceptToken } = await sendProposal(t, org, signedOne._id, {
      to: 'buyer@customer.example',
    });
    const accepted = await t.request('POST', `/p/${acceptToken}/accept`, {
      body: { name: 'Pat Buyer', email: 'pat@customer.example', signature: 'Pat Buyer' },
    });
    expect(accepted.status).toBe(200);
    const declinedOne = await createProposal(t, org);
    const { token: declineToken } = await sendProposal(t, org, declinedOne._id);
    const declined = await t.request('POST', `/p/${declineToken}/decline`, { body: { reason: 'Budget' } });
    expect(declined.status).toBe(200);

    const expected: Delivered[] = [
      { event: 'proposal.sent', id: signedOne._id },
      { event: 'proposal.accepted', id: signedOne._id },
      { event: 'contract.signed', id: signedOne._id },
      { event: 'proposal.sent', id: declinedOne._id },
      { event: 'proposal.declined', id: declinedOne._id },
    ];
    const hits = await receiver.waitForRequests(expected.length, 20_000);
    const key = (d: Delivered) => `${d.event} ${String(d.id)}`;
    expect(hits.map(decode).map(key).sort()).toEqual(expected.map(key).sort());
  });
});
