// Locks in gap-free estimate numbers under concurrency on PostgreSQL: 30 estimates created by parallel
// requests get exactly EST-000001..EST-000030, no gap and no duplicate, and a create refused after
// its checks takes no number.
import { describe, expect } from 'vitest';
import { createLead, fileTest, readOutput, type TestContext, type TestOrg, TOOL } from '../fixtures/index.ts';

const ESTIMATES = 30;

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

const create = (t: TestContext, org: TestOrg, body: Record<string, unknown>) =>
  t.request('POST', '/api/v1/estimates', {
    token: org.token,
    body: { currency: 'EUR', line_items: [{ description: 'Work', quantity: 1, unit_price: 99.99 }], ...body },
  });

describe('estimate numbering under concurrency', () => {
  test(`numbers ${ESTIMATES} estimates created in parallel EST-000001..EST-${String(ESTIMATES).padStart(6, '0')}`, async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org);
    const created = await Promise.all(
      Array.from(
        { length: ESTIMATES },
        async () =>
          (await readOutput(await create(t, org, { lead_id: lead._id }), TOOL.create_estimate, 201)).estimate,
      ),
    );
    const numbers = created.map((e) => e.number).sort();
    const expected = Array.from({ length: ESTIMATES }, (_, i) => `EST-${String(i + 1).padStart(6, '0')}`);
    expect(numbers).toEqual(expected);

    // A refused create (valid_until before issue_date) takes no number.
    const refused = await create(t, org, {
      lead_id: lead._id,
      issue_date: '2031-02-01',
      valid_until: '2031-01-01',
    });
    expect(refused.status).toBe(400);
    const next = (await readOutput(await create(t, org, { lead_id: lead._id }), TOOL.create_estimate, 201))
      .estimate;
    expect(next.number).toBe(`EST-${String(ESTIMATES + 1).padStart(6, '0')}`);
  });
});
