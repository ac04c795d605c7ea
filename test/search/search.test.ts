// Locks in global search: one ranked list over live leads, contacts and opportunities of the caller's organization, limited to the types its token and role may read.
import { describe, expect } from 'vitest';
import type { ErrorBody } from '../../core/errors.ts';
import { seedContacts } from '../contacts/seed.ts';
import {
  type Caller,
  fileTest,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { seedLeads } from '../leads/seed.ts';
import { seedOpportunities } from '../opportunities/seed.ts';

// Rows straight in the tables: trashed ones in the same instant as live ones, and contact emails of any type.
async function insertLead(
  t: TestContext,
  orgId: string,
  name: string,
  extra: { deleted?: boolean; description?: string } = {},
): Promise<string> {
  const deletedAt = extra.deleted ? new Date() : null;
  const [id = ''] = await seedLeads(t, orgId, [{ name, description: extra.description ?? null, deletedAt }]);
  return id;
}

async function insertContact(t: TestContext, orgId: string, leadId: string, name: string, deleted = false) {
  const email = `${name.split(' ')[0]?.toLowerCase()}@example.test`;
  const [id = ''] = await seedContacts(t, orgId, [
    {
      leadId,
      name,
      title: 'Buyer',
      emails: [{ email, type: 'office' }],
      deletedAt: deleted ? new Date() : null,
    },
  ]);
  return id;
}

async function insertOpportunity(
  t: TestContext,
  orgId: string,
  leadId: string,
  note: string | null,
  deleted = false,
): Promise<string> {
  const [id = ''] = await seedOpportunities(t, orgId, [
    {
      leadId,
      note,
      value: 1200.5,
      currency: 'EUR',
      pipelineStage: 'proposal',
      deletedAt: deleted ? new Date() : null,
    },
  ]);
  return id;
}

async function search(t: TestContext, org: TestOrg, query: string, as: Caller = org) {
  return readOutput(await t.request('GET', `/api/v1/search?${query}`, { token: as.token }), TOOL.search_crm);
}

/** A search the caller may not run: its error body. */
async function refusedSearch(t: TestContext, query: string, as: Caller, status: number): Promise<ErrorBody> {
  return readError(await t.request('GET', `/api/v1/search?${query}`, { token: as.token }), status);
}

let zephyrLead: string;
let zephyrContact: string;
let zephyrOpportunity: string;
let silentOpportunity: string;

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

test.beforeAll(async ({ t, org, other }) => {
  zephyrLead = await insertLead(t, org.orgId, 'Zephyrine Holdings', { description: 'Wind turbines' });
  zephyrContact = await insertContact(t, org.orgId, zephyrLead, 'Zephyrine Moreau');
  zephyrOpportunity = await insertOpportunity(t, org.orgId, zephyrLead, 'Zephyrine turbine retrofit');
  silentOpportunity = await insertOpportunity(t, org.orgId, zephyrLead, null);
  // Ranking fixtures: the exact name must beat a longer name that only starts the same way.
  await insertLead(t, org.orgId, 'Quokkaville Partners');
  await insertLead(t, org.orgId, 'Quokka');
  // Never found: trashed records, and another organization's.
  const trashed = await insertLead(t, org.orgId, 'Xylograph Trashed', { deleted: true });
  await insertContact(t, org.orgId, zephyrLead, 'Xylograph Contact', true);
  await insertOpportunity(t, org.orgId, zephyrLead, 'Xylograph deal', true);
  await insertContact(t, org.orgId, trashed, 'Xylograph Orphan');
  const foreign = await insertLead(t, other.orgId, 'Zephyrine Foreign');
  await insertContact(t, other.orgId, foreign, 'Zephyrine Elsewhere');
});

describe('search_crm over REST', () => {
  test('finds each type, with the lead it belongs to and a snippet', async ({ t, org }) => {
    const body = await search(t, org, 'q=zephyrine');
    const byId = new Map(body.results.map((r) => [r._id, r]));
    expect(body.count).toBe(3);
    expect(byId.get(zephyrLead)).toMatchObject({
      type: 'lead',
      name: 'Zephyrine Holdings',
      lead_id: null,
      lead_name: 'Zephyrine Holdings',
      snippet: 'Wind turbines',
    });
    expect(byId.get(zephyrContact)).toMatchObject({
      type: 'contact',
      name: 'Zephyrine Moreau',
      lead_id: zephyrLead,
      lead_name: 'Zephyrine Holdings',
      snippet: 'Buyer · zephyrine@example.test',
    });
    expect(byId.get(zephyrOpportunity)).toMatchObject({
      type: 'opportunity',
      name: 'Zephyrine turbine retrofit',
      lead_id: zephyrLead,
      lead_name: 'Zephyrine Holdings',
    });
    for (const r of body.results) expect(typeof r.rank).toBe('number');
    const ranks = body.results.map((r) => r.rank);
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
  });

  test('names an opportunity without a note by its value and lead', async ({ t, org }) => {
    const body = await search(t, org, 'q=proposal&types=opportunity');
    const found = body.results.find((r) => r._id === silentOpportunity);
    expect(found?.name).toBe('EUR 1200.50 opportunity on Zephyrine Holdings');
  });

  test('matches word prefixes and ranks the exact name above a partial one', async ({ t, org }) => {
    const body = await search(t, org, 'q=quokka');
    expect(body.results.map((r) => r.name)).toEqual(['Quokka', 'Quokkaville Partners']);
    expect(body.results[0]?.rank).toBeGreaterThan(body.results[1]?.rank ?? Number.POSITIVE_INFINITY);
    const partial = await search(t, org, 'q=quokkav');
    expect(partial.results.map((r) => r.name)).toEqual(['Quokkaville Partners']);
  });

  test('never returns trashed records or children of a trashed lead', async ({ t, org }) => {
    const body = await search(t, org, 'q=xylograph');
    expect(body.results).toEqual([]);
  });

  test("never returns another organization's records", async ({ t, org, other }) => {
    const body = await search(t, org, 'q=zephyrine');
    expect(body.results.some((r) => r.name.includes('Foreign') || r.name.includes('Elsewhere'))).toBe(false);
    const theirs = await search(t, org, 'q=zephyrine', other);
    expect(theirs.results.map((r) => r.name).sort()).toEqual(['Zephyrine Elsewhere', 'Zephyrine Foreign']);
  });

  test('filters by types and caps the results at limit', async ({ t, org }) => {
    const contactsOnly = await search(t, org, 'q=zephyrine&types=contact');
    expect(contactsOnly.results.map((r) => r.type)).toEqual(['contact']);
    const two = await search(t, org, 'q=zephyrine&types=lead,opportunity');
    expect(two.results.map((r) => r.type).sort()).toEqual(['lead', 'opportunity']);
    const one = await search(t, org, 'q=zephyrine&limit=1');
    expect(one.results).toHaveLength(1);
    expect(one.count).toBe(1);
  });

  test('needs read:leads, then limits a token to the types its scopes allow', async ({ t, org }) => {
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    const a = await search(t, org, 'q=zephyrine', leadsOnly);
    expect(a.results.map((r) => r.type)).toEqual(['lead']);
    // Search is lead data (results name their lead), so it needs read:leads itself.
    const contactsOnly = await t.createPat(org.orgId, org.ownerId, ['read:contacts']);
    const b = await refusedSearch(t, 'q=zephyrine', contactsOnly, 403);
    expect(b).toMatchObject({ code: 'scope_missing', required_scope: 'read:leads' });
    const withContacts = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'read:contacts']);
    const c = await search(t, org, 'q=zephyrine', withContacts);
    expect(c.results.map((r) => r.type).sort()).toEqual(['contact', 'lead']);
    const withDeals = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'read:opportunities']);
    const d = await search(t, org, 'q=zephyrine&types=contact,opportunity', withDeals);
    expect(d.results.map((r) => r.type)).toEqual(['opportunity']);
    const writeOnly = await t.createPat(org.orgId, org.ownerId, ['write:leads']);
    expect(await refusedSearch(t, 'q=zephyrine', writeOnly, 403)).toMatchObject({
      required_scope: 'read:leads',
    });
  });

  test('lets every role that can view leads search', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    const body = await search(t, org, 'q=zephyrine', viewer);
    expect(body.results.length).toBeGreaterThan(0);
  });

  test('returns nothing for a query of punctuation only', async ({ t, org }) => {
    for (const q of ['!!!', '&|:*', '...', '()']) {
      const body = await search(t, org, `q=${encodeURIComponent(q)}`);
      expect(body).toEqual({ results: [], count: 0 });
    }
  });

  test('treats tsquery syntax and SQL in the query as plain words (200, never 500)', async ({ t, org }) => {
    const attempts = [
      "zephyrine' OR 1=1 --",
      'zephyrine & !holdings',
      'zephyrine:* | quokka',
      "'; drop table leads; --",
      'zephyrine <-> holdings',
      '\\x00 zephyrine',
      'a'.repeat(200),
    ];
    for (const q of attempts) await search(t, org, `q=${encodeURIComponent(q)}`);
    // Operators are dropped: "zephyrine & !holdings" means both words, and finds the lead named so.
    const body = await search(t, org, `q=${encodeURIComponent('zephyrine & !holdings')}`);
    expect(body.results.map((r) => r._id)).toContain(zephyrLead);
  });

  test('rejects bad input with field details', async ({ t, org }) => {
    const cases = [
      '',
      'q=',
      `q=${'a'.repeat(201)}`,
      'q=x&limit=0',
      'q=x&limit=51',
      'q=x&types=lead,widget',
      'q=x&types=',
      'q=%00',
      'q=x&extra=1',
    ];
    for (const query of cases) {
      const res = await t.request('GET', `/api/v1/search?${query}`, { token: org.token });
      expect(res.status, query).toBe(400);
      const body = await readError(res, 400);
      expect(body.details?.length, query).toBeGreaterThan(0);
    }
  });

  test('requires authentication', async ({ t }) => {
    const res = await t.request('GET', '/api/v1/search?q=zephyrine');
    expect(res.status).toBe(401);
  });
});
