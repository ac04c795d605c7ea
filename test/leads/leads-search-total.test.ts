// Locks in the exact total of a lead search counted on lead_search_terms (tools/leads/search-total.ts):
// the table holds exactly the words of each live lead's search vector through every write, and the
// `total` a search answers equals a count of the leads the search condition matches.
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { rowsOf } from '../../core/db/sql.ts';
import { prefixLexemes, prefixTsQuery } from '../../core/text-search.ts';
import { leads } from '../../tools/leads/tables.ts';
import { createLead, readOutput, type TestContext, type TestOrg, TOOL, test } from '../fixtures/index.ts';

/** Searches with ordinary words (one word each takes the words-table path; several, the GIN count). */
const SEARCHES = [
  'harbor',
  'harb',
  'HARBOR',
  'acme harbor',
  'café',
  'caf',
  'ωme',
  'straße',
  '12',
  'new',
  'zzz',
];

async function searchTotal(t: TestContext, org: TestOrg, search: string): Promise<number> {
  const res = await t.request('GET', `/api/v1/leads?search=${encodeURIComponent(search)}&limit=1`, {
    token: org.token,
  });
  return (await readOutput(res, TOOL.list_leads)).total;
}

/** The leads the search condition itself matches, counted on the leads table. */
async function countedMatches(t: TestContext, orgId: string, search: string): Promise<number> {
  const [row] = await t.services.db.system
    .select({ n: count() })
    .from(leads)
    .where(
      and(
        eq(leads.orgId, orgId),
        isNull(leads.deletedAt),
        sql`${leads.search} @@ to_tsquery('simple', ${prefixTsQuery(search)})`,
      ),
    );
  return row?.n ?? 0;
}

/** Rows of lead_search_terms that are not words of a live lead's vector, and words missing from it. */
async function termsDrift(t: TestContext): Promise<unknown[]> {
  return rowsOf(
    await t.services.db.system.execute(sql`
      (select org_id, term collate "default", lead_id from lead_search_terms
       except select org_id, w, id from leads, unnest(tsvector_to_array(search)) w where deleted_at is null)
      union all
      (select org_id, w, id from leads, unnest(tsvector_to_array(search)) w where deleted_at is null
       except select org_id, term collate "default", lead_id from lead_search_terms)`),
  );
}

async function expectExactTotals(t: TestContext, org: TestOrg): Promise<void> {
  expect(await termsDrift(t)).toEqual([]);
  for (const search of SEARCHES) {
    expect(await searchTotal(t, org, search), search).toBe(await countedMatches(t, org.orgId, search));
  }
}

describe('lead search total from the words table', () => {
  test('ordinary words reach the words table as plain word prefixes', async ({ t }) => {
    for (const search of SEARCHES) {
      const [row] = rowsOf(
        await t.services.db.system.execute(
          sql`select to_tsquery('simple', ${prefixTsQuery(search)})::text as query`,
        ),
      );
      const query = typeof row === 'object' && row !== null && 'query' in row ? String(row.query) : '';
      expect(prefixLexemes(query), search).not.toBeNull();
    }
  });

  test('equals a count of the matches through create, bulk, edit, trash, restore and delete', async ({
    t,
    other,
  }) => {
    const org = await t.createOrg();
    await expectExactTotals(t, org);
    const ids: string[] = [];
    for (const body of [
      { name: 'Acme Harbor', description: 'harbors and harborview' },
      { name: 'Café Ωmega', url: 'https://omega.example' },
      { name: 'Straße 12', description: 'Harbor office' },
      { name: 'Nothing alike' },
    ]) {
      ids.push((await createLead(t, org, body))._id);
    }
    // Another organization's words never count here.
    await createLead(t, other, { name: 'Acme Harbor elsewhere' });
    await expectExactTotals(t, org);

    const bulk = await t.request('POST', '/api/v1/leads/bulk', {
      token: org.token,
      body: { items: [{ name: 'Harbor Two' }, { _id: ids[3], name: 'Now a harbor' }] },
    });
    expect(bulk.status).toBe(200);
    await expectExactTotals(t, org);

    await t.request('PATCH', `/api/v1/leads/${ids[0]}`, {
      token: org.token,
      body: { name: 'Acme', status: 'contacted' },
    });
    await t.request('PUT', `/api/v1/leads/${ids[1]}`, { token: org.token, body: { name: 'Café Ωmega 12' } });
    await expectExactTotals(t, org);

    await t.request('DELETE', `/api/v1/leads/${ids[2]}`, { token: org.token });
    await expectExactTotals(t, org);
    await t.request('POST', `/api/v1/trash/${ids[2]}/restore`, { token: org.token });
    await expectExactTotals(t, org);

    // A purge deletes the row for good.
    await t.services.db.system.delete(leads).where(eq(leads.id, ids[0] ?? ''));
    await expectExactTotals(t, org);
    expect(await searchTotal(t, org, 'harbor')).toBe(3);
  });
});
