// Locks in how a lead search orders its results: by relevance while at most MAX_RANKED_MATCHES leads match, newest first beyond that, with an exact total either way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../core/ids.ts';
import { leads } from '../../tools/leads/tables.ts';
import { MAX_RANKED_MATCHES } from '../../tools/leads/tools.ts';
import { createTestContext, readOutput, type TestContext, type TestOrg, TOOL } from '../fixtures/index.ts';

let t: TestContext;
let org: TestOrg;
const best = newId();

beforeAll(async () => {
  t = await createTestContext({}, { withoutRateLimits: true });
  org = await t.createOrg();
  const start = Date.parse('2026-01-01T00:00:00Z');
  // The best match is the oldest lead; the others mention the word once and are newer.
  await t.services.db.system.insert(leads).values({
    id: best,
    orgId: org.orgId,
    name: 'Zebra zebra zebra',
    description: 'zebra',
    createdAt: new Date(start),
  });
  const rows = Array.from({ length: MAX_RANKED_MATCHES - 1 }, (_, i) => ({
    id: newId(),
    orgId: org.orgId,
    name: `Zebra ${i}`,
    createdAt: new Date(start + (i + 1) * 1000),
  }));
  await t.services.db.system.insert(leads).values(rows);
});
afterAll(() => t.close());

async function search(): Promise<{ first: string | undefined; total: number }> {
  const res = await t.request('GET', '/api/v1/leads?search=zebra&limit=5', { token: org.token });
  const body = await readOutput(res, TOOL.list_leads);
  return { first: body.leads[0]?._id, total: body.total };
}

describe('lead search ordering', () => {
  it('ranks by relevance up to the limit, then lists newest first', async () => {
    expect(await search()).toEqual({ first: best, total: MAX_RANKED_MATCHES });

    const newest = newId();
    await t.services.db.system.insert(leads).values({
      id: newest,
      orgId: org.orgId,
      name: 'Zebra newest',
      createdAt: new Date('2026-06-01T00:00:00Z'),
    });
    expect(await search()).toEqual({ first: newest, total: MAX_RANKED_MATCHES + 1 });
  });
});
