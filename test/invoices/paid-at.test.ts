// Locks in a payment's paid_at kept exactly, whatever the year (0001-0099 came back 1900 or 2000
// years later on the invoice) or offset: the payment and the invoice say the same instant in the same text.
import { describe, expect } from 'vitest';
import { createInvoice, fileTest, finalizeInvoice, readOutput, TOOL } from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

describe('paid_at', () => {
  test.for([
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0050-03-01T10:00:00Z', '0050-03-01T10:00:00.000Z'],
    ['0099-12-31T23:00:00-02:00', '0100-01-01T01:00:00.000Z'],
    ['2026-01-15T09:30:00.123+05:30', '2026-01-15T04:00:00.123Z'],
  ])('stores %s exactly as %s on the payment and the invoice', async ([paidAt, stored], { t, org }) => {
    const invoice = await finalizeInvoice(t, org, (await createInvoice(t, org))._id);
    const res = await t.request('POST', `/api/v1/invoices/${invoice._id}/payments`, {
      token: org.token,
      body: { amount: invoice.total, paid_at: paidAt },
    });
    const paid = (await readOutput(res, TOOL.record_invoice_payment, 201)).invoice;
    expect(paid.paid_at).toBe(stored);
    expect(paid.payments.map((p) => p.paid_at)).toEqual([stored]);
    const read = await t.request('GET', `/api/v1/invoices/${invoice._id}`, { token: org.token });
    const again = (await readOutput(read, TOOL.get_invoice)).invoice;
    expect([again.paid_at, again.payments[0]?.paid_at]).toEqual([stored, stored]);
  });
});
