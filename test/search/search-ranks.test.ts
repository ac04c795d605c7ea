// Locks in the global search's one-word ranking from the words tables (lead_search_terms,
// opportunity_search_terms and contact_search_terms, migrations 0034-0035): the tables hold exactly each live record's words with
// their reduced vectors through every write, and a one-word search ranked from them answers row for
// row, rank for rank, what ranking every match's whole vector answers.
import { eq, sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { rowsOf } from '../../core/db/sql.ts';
import { type GlobalSearchTerms, prefixTsQuery, prefixUpperBound } from '../../core/text-search.ts';
import { contactSearchSource } from '../../tools/contacts/search.ts';
import { leadSearchSource } from '../../tools/leads/search.ts';
import { leads } from '../../tools/leads/tables.ts';
import { opportunitySearchSource } from '../../tools/opportunities/search.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import {
  createContact,
  createLead,
  createOpportunity,
  fileTest,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

/** One-word searches: prefixes, whole words, names equal to the word, words of several scripts. */
const WORDS = ['harbor', 'harb', 'h', 'renewal', 'acme', 'café', 'caf', 'straße', '12', 'new', 'zzz', 'ωme'];

/** Words-table rows that are no live record's words, and words missing from the tables. */
async function termsDrift(t: TestContext): Promise<unknown[]> {
  return rowsOf(
    await t.services.db.system.execute(sql`
      with expected as (
        select 'lead' as kind, l.org_id, w.term, l.id, w.positions::text, w.name_is_term
          from leads l, search_terms_of(l.search, l.name) w where l.deleted_at is null
        union all
        select 'opportunity', o.org_id, w.term, o.id, w.positions::text, w.name_is_term
          from opportunities o, search_terms_of(o.search, nullif(o.note, '')) w where o.deleted_at is null
        union all
        select 'contact', c.org_id, w.term, c.id, w.positions::text, w.name_is_term
          from contacts c, search_terms_of(c.search, c.name) w where c.deleted_at is null),
      stored as (
        select 'lead' as kind, org_id, term collate "default", lead_id, positions::text, name_is_term
          from lead_search_terms
        union all
        select 'opportunity', org_id, term collate "default", opportunity_id, positions::text, name_is_term
          from opportunity_search_terms
        union all
        select 'contact', org_id, term collate "default", contact_id, positions::text, name_is_term
          from contact_search_terms)
      (select * from stored except all select * from expected)
      union all
      (select * from expected except all select * from stored)`),
  );
}

/** The global search's statement for `word`, from the words tables or (word: null) from the vectors. */
async function ranked(t: TestContext, org: TestOrg, q: string, limit: number, fromWords: boolean) {
  const prefix = prefixTsQuery(q) ?? '';
  const lexeme = q.normalize('NFKC').toLowerCase();
  const terms: GlobalSearchTerms = {
    orgId: org.orgId,
    prefix,
    exact: prefix.replaceAll(':*', ''),
    phrase: lexeme,
    limit,
    word: fromWords ? { lexeme, upper: prefixUpperBound(lexeme) } : null,
  };
  const union = sql.join(
    [leadSearchSource, contactSearchSource, opportunitySearchSource].map((s) => sql`(${s.branch(terms)})`),
    sql` union all `,
  );
  const rows = rowsOf(
    await t.services.db.withTenant(org.orgId, (tx) =>
      tx.execute(
        sql`select type, id, name, lead_id, lead_name, snippet, rank::text as rank from (${union}) found order by rank desc, id desc limit ${limit}`,
      ),
    ),
  );
  return z.array(z.looseObject({ type: z.string(), id: z.string(), rank: z.string() })).parse(rows);
}

async function expectSameRanking(t: TestContext, org: TestOrg): Promise<void> {
  expect(await termsDrift(t)).toEqual([]);
  for (const word of WORDS) {
    for (const limit of [2, 50]) {
      const fromVectors = await ranked(t, org, word, limit, false);
      expect(await ranked(t, org, word, limit, true), `${word} limit ${limit}`).toEqual(fromVectors);
    }
  }
}

async function search(t: TestContext, org: TestOrg, q: string) {
  const res = await t.request('GET', `/api/v1/search?q=${encodeURIComponent(q)}&limit=50`, {
    token: org.token,
  });
  return (await readOutput(res, TOOL.search_crm)).results;
}

describe('one-word search ranked from the words tables', () => {
  test('ranks as the whole vectors do through create, edit, trash, restore and purge', {
    timeout: 180_000,
  }, async ({ t, org, other }) => {
    const names = [
      'Harbor',
      'Acme Harbor Inc',
      'Harbor harbors harborview',
      'Café Straße 12',
      'Ωmega harbor',
      'Nothing alike',
      'HARBOR',
    ];
    const ids: string[] = [];
    for (const [i, name] of names.entries()) {
      const lead = await createLead(t, org, {
        name,
        description: i % 2 === 0 ? 'harbor office near the harbor' : null,
      });
      ids.push(lead._id);
    }
    const [harbor = '', acme = '', many = '', cafe = ''] = ids;
    const deals: string[] = [];
    for (const [leadId, note] of [
      [harbor, 'harbor'],
      [acme, 'Renewal harbor'],
      [many, null],
      [cafe, 'Café renewal'],
      [acme, 'RENEWAL'],
    ] as const) {
      deals.push((await createOpportunity(t, org, { lead_id: leadId, note, value: 1200 }))._id);
    }
    const master = await createContact(t, org, { lead_id: acme, name: 'Harbor Master', title: 'harbor' });
    await createContact(t, org, { lead_id: many, name: 'Harbor', emails: [{ email: 'harbor@acme.test' }] });
    // Another organization's words never rank here.
    await createLead(t, other, { name: 'Harbor' });
    await expectSameRanking(t, org);

    // The API answers the same records in the same order (ranks rounded to 4 places).
    const api = await search(t, org, 'harbor');
    const direct = await ranked(t, org, 'harbor', 50, false);
    expect(api.map((r) => [r.type, r._id])).toEqual(direct.map((r) => [r.type, r.id]));
    // Names that are the whole word get the +1: two leads, a contact and the deal whose note is "harbor".
    expect(api.filter((r) => r.rank > 1).map((r) => `${r.type} ${r.name}`)).toEqual(
      expect.arrayContaining(['lead HARBOR', 'lead Harbor', 'contact Harbor', 'opportunity harbor']),
    );
    expect(api.filter((r) => r.rank > 1)).toHaveLength(4);

    await t.request('PATCH', `/api/v1/leads/${many}`, { token: org.token, body: { name: 'Harbors' } });
    await t.request('PATCH', `/api/v1/leads/${harbor}`, {
      token: org.token,
      body: { description: 'renewal renewal renewal' },
    });
    await t.request('PATCH', `/api/v1/opportunities/${deals[1]}`, {
      token: org.token,
      body: { note: 'acme' },
    });
    await t.request('PATCH', `/api/v1/opportunities/${deals[0]}`, { token: org.token, body: { note: null } });
    await t.request('PATCH', `/api/v1/contacts/${master._id}`, { token: org.token, body: { name: 'Acme' } });
    await expectSameRanking(t, org);

    // A trashed lead hides its opportunities too; restored, they are back.
    await t.request('DELETE', `/api/v1/leads/${acme}`, { token: org.token });
    await t.request('DELETE', `/api/v1/opportunities/${deals[3]}`, { token: org.token });
    await expectSameRanking(t, org);
    await t.request('POST', `/api/v1/trash/${acme}/restore`, { token: org.token });
    await t.request('POST', `/api/v1/trash/${deals[3]}/restore`, { token: org.token });
    await expectSameRanking(t, org);

    await t.services.db.system.delete(opportunities).where(eq(opportunities.id, deals[4] ?? ''));
    await t.services.db.system.delete(leads).where(eq(leads.id, cafe));
    await expectSameRanking(t, org);
    expect((await search(t, org, 'café')).map((r) => r.type)).toEqual([]);
  });
});
