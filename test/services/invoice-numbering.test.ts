// Locks in gap-free invoice numbers under concurrency on PostgreSQL: 30 drafts finalized by parallel
// requests get exactly INV-000001..INV-000030, no gap and no duplicate, and finalizing them all again
// in parallel takes no further number.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLead,
  createTestContext,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const DRAFTS = 30;

let t: TestContext;
let org: TestOrg;

beforeAll(async () => {
  t = await createTestContext({}, { withoutRateLimits: true });
  org = await t.createOrg();
});
afterAll(() => t?.close());

async function draft(leadId: string): Promise<string> {
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

const finalize = async (id: string) =>
  (
    await readOutput(
      await t.request('POST', `/api/v1/invoices/${id}/finalize`, { token: org.token }),
      TOOL.finalize_invoice,
    )
  ).invoice;

describe('invoice numbering under concurrency', () => {
  it(`numbers ${DRAFTS} drafts finalized in parallel INV-000001..INV-${String(DRAFTS).padStart(6, '0')}`, async () => {
    const lead = await createLead(t, org);
    const ids: string[] = [];
    for (let i = 0; i < DRAFTS; i++) ids.push(await draft(lead._id));

    const finalized = await Promise.all(ids.map(finalize));
    const numbers = finalized.map((inv) => inv.number).sort();
    const expected = Array.from({ length: DRAFTS }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`);
    expect(numbers).toEqual(expected);
    expect(finalized.every((inv) => inv.status === 'open')).toBe(true);

    // Finalizing again (in parallel) is a no-op: same numbers, the counter does not move.
    const again = await Promise.all(ids.map(finalize));
    expect(again.map((inv) => inv.number).sort()).toEqual(expected);
    const next = await finalize(await draft(lead._id));
    expect(next.number).toBe(`INV-${String(DRAFTS + 1).padStart(6, '0')}`);
  });
});
