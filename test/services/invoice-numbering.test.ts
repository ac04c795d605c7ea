// Locks in gap-free invoice numbers under concurrency on PostgreSQL: 30 drafts finalized by parallel
// requests get exactly INV-000001..INV-000030, no gap and no duplicate, and finalizing them all again
// in parallel takes no further number.
import { describe, expect } from 'vitest';
import { createLead, fileTest, readOutput, type TestContext, type TestOrg, TOOL } from '../fixtures/index.ts';

const DRAFTS = 30;

const test = fileTest({ options: { withoutRateLimits: true } });

async function draft(t: TestContext, org: TestOrg, leadId: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/invoices', {
    token: org.token,
    body: {
      lead_id: leadId,
      currency: 'EUR',
      line_items: [{ description: 'Work', quantity: 1, unit_price: 99.99 }],
    },
  });
  return (await readOutput(res, TOOL.create_invoice, 201)).invoice._id;
}

const finalize = async (t: TestContext, org: TestOrg, id: string) =>
  (
    await readOutput(
      await t.request('POST', `/api/v1/invoices/${id}/finalize`, { token: org.token }),
      TOOL.finalize_invoice,
    )
  ).invoice;

describe('invoice numbering under concurrency', () => {
  test(`numbers ${DRAFTS} drafts finalized in parallel INV-000001..INV-${String(DRAFTS).padStart(6, '0')}`, async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org);
    const ids: string[] = [];
    for (let i = 0; i < DRAFTS; i++) ids.push(await draft(t, org, lead._id));

    const finalized = await Promise.all(ids.map((id) => finalize(t, org, id)));
    const numbers = finalized.map((inv) => inv.number).sort();
    const expected = Array.from({ length: DRAFTS }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`);
    expect(numbers).toEqual(expected);
    expect(finalized.every((inv) => inv.status === 'open')).toBe(true);

    // Finalizing again (in parallel) is a no-op: same numbers, the counter does not move.
    const again = await Promise.all(ids.map((id) => finalize(t, org, id)));
    expect(again.map((inv) => inv.number).sort()).toEqual(expected);
    const next = await finalize(t, org, await draft(t, org, lead._id));
    expect(next.number).toBe(`INV-${String(DRAFTS + 1).padStart(6, '0')}`);
  });
});
