// Locks in how a lead search orders its results: by relevance while at most MAX_RANKED_MATCHES leads match, newest first beyond that, with an exact total either way.
import { describe, expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { MAX_RANKED_MATCHES } from '../../tools/leads/tools.ts';
import { fileTest, readOutput, type TestContext, type TestOrg, TOOL } from '../fixtures/index.ts';
import { seedLeads } from './seed.ts';

const best = newId();

const test = fileTest({ options: { withoutRateLimits: true } });

test.beforeAll(async ({ t, org }) => {
  const start = Date.parse('2026-01-01T00:00:00Z');
  // The best match is the oldest lead; the others mention the word once and are newer.
  await seedLeads(t, org.orgId, [
    { id: best, name: 'Zebra zebra zebra', description: 'zebra', createdAt: new Date(start) },
  ]);
  const rows = Array.from({ length: MAX_RANKED_MATCHES - 1 }, (_, i) => ({
    name: `Zebra ${i}`,
    createdAt: new Date(start + (i + 1) * 1000),
  }));
  await seedLeads(t, org.orgId, rows);
});

async function search(t: TestContext, org: TestOrg): Promise<{ first: string | undefined; total: number }> {
  const res = await t.request('GET', '/api/v1/leads?search=zebra&limit=5', { token: org.token });
  const body = await readOutput(res, TOOL.list_leads);
  return { first: body.leads[0]?._id, total: body.total };
}

describe('lead search ordering', () => {
  test('ranks by relevance up to the limit, then lists newest first', async ({ t, org }) => {
    expect(await search(t, org)).toEqual({ first: best, total: MAX_RANKED_MATCHES });

    const [newest] = await seedLeads(t, org.orgId, [
      { name: 'Zebra newest', createdAt: new Date('2026-06-01T00:00:00Z') },
    ]);
    expect(await search(t, org)).toEqual({ first: newest, total: MAX_RANKED_MATCHES + 1 });
  });
});
