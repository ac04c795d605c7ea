// Locks in global search: one ranked list over live leads, contacts and opportunities of the caller's organization, limited to the types its token and role may read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { contacts } from '../../tools/contacts/tables.ts';
import { leads } from '../../tools/leads/tables.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import {
  type Caller,
  createTestContext,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

let t: TestContext;
let org: TestOrg;
let other: TestOrg;

async function insertLead(
  orgId: string,
  name: string,
  extra: { deleted?: boolean; description?: string } = {},
) {
  const id = newId();
  await t.services.db.system.insert(leads).values({
    id,
    orgId,
    name,
    description: extra.description ?? null,
    deletedAt: extra.deleted ? new Date() : null,
  });
  return id;
}

async function insertContact(orgId: string, leadId: string, name: string, deleted = false) {
  const id = newId();
  await t.services.db.system.insert(contacts).values({
    id,
    orgId,
    leadId,
    name,
    title: 'Buyer',
    emails: [{ email: `${name.split(' ')[0]?.toLowerCase()}@example.test`, type: 'office' }],
    deletedAt: deleted ? new Date() : null,
  });
  return id;
}

async function insertOpportunity(orgId: string, leadId: string, note: string | null, deleted = false) {
  const id = newId();
  await t.services.db.system.insert(opportunities).values({
    id,
    orgId,
    leadId,
    note,
    value: 1200.5,
    currency: 'EUR',
    pipelineStage: 'proposal',
    deletedAt: deleted ? new Date() : null,
  });
  return id;
}

async function search(query: string, as: Caller = org) {
  return readOutput(await t.request('GET', `/api/v1/search?${query}`, { token: as.token }), TOOL.search_crm);
}

/** A search the caller may not run: its error body. */
async function refusedSearch(query: string, as: Caller, status: number): Promise<ErrorBody> {
  return readError(await t.request('GET', `/api/v1/search?${query}`, { token: as.token }), status);
}

let zephyrLead: string;
let zephyrContact: string;
let zephyrOpportunity: string;
let silentOpportunity: string;

beforeAll(async () => {
  t = await createTestContext({}, { withoutRateLimits: true });
  org = await t.createOrg({ plan: 'pro' });
  other = await t.createOrg({ name: 'Other', plan: 'pro' });
  zephyrLead = await insertLead(org.orgId, 'Zephyrine Holdings', { description: 'Wind turbines' });
  zephyrContact = await insertContact(org.orgId, zephyrLead, 'Zephyrine Moreau');
  zephyrOpportunity = await insertOpportunity(org.orgId, zephyrLead, 'Zephyrine turbine retrofit');
  silentOpportunity = await insertOpportunity(org.orgId, zephyrLead, null);
  // Ranking fixtures: the exact name must beat a longer name that only starts the same way.
  await insertLead(org.orgId, 'Quokkaville Partners');
  await insertLead(org.orgId, 'Quokka');
  // Never found: trashed records, and another organization's.
  const trashed = await insertLead(org.orgId, 'Xylograph Trashed', { deleted: true });
  await insertContact(org.orgId, zephyrLead, 'Xylograph Contact', true);
  await insertOpportunity(org.orgId, zephyrLead, 'Xylograph deal', true);
  await insertContact(org.orgId, trashed, 'Xylograph Orphan');
  const foreign = await insertLead(other.orgId, 'Zephyrine Foreign');
  await insertContact(other.orgId, foreign, 'Zephyrine Elsewhere');
});
afterAll(() => t.close());

describe('search_crm over REST', () => {
  it('finds each type, with the lead it belongs to and a snippet', async () => {
    const body = await search('q=zephyrine');
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

  it('names an opportunity without a note by its value and lead', async () => {
    const body = await search('q=proposal&types=opportunity');
    const found = body.results.find((r) => r._id === silentOpportunity);
    expect(found?.name).toBe('EUR 1200.50 opportunity on Zephyrine Holdings');
  });

  it('matches word prefixes and ranks the exact name above a partial one', async () => {
    const body = await search('q=quokka');
    expect(body.results.map((r) => r.name)).toEqual(['Quokka', 'Quokkaville Partners']);
    expect(body.results[0]?.rank).toBeGreaterThan(body.results[1]?.rank ?? Number.POSITIVE_INFINITY);
    const partial = await search('q=quokkav');
    expect(partial.results.map((r) => r.name)).toEqual(['Quokkaville Partners']);
  });

  it('never returns trashed records or children of a trashed lead', async () => {
    const body = await search('q=xylograph');
    expect(body.results).toEqual([]);
  });

  it("never returns another organization's records", async () => {
    const body = await search('q=zephyrine');
    expect(body.results.some((r) => r.name.includes('Foreign') || r.name.includes('Elsewhere'))).toBe(false);
    const theirs = await search('q=zephyrine', other);
    expect(theirs.results.map((r) => r.name).sort()).toEqual(['Zephyrine Elsewhere', 'Zephyrine Foreign']);
  });

  it('filters by types and caps the results at limit', async () => {
    const contactsOnly = await search('q=zephyrine&types=contact');
    expect(contactsOnly.results.map((r) => r.type)).toEqual(['contact']);
    const two = await search('q=zephyrine&types=lead,opportunity');
    expect(two.results.map((r) => r.type).sort()).toEqual(['lead', 'opportunity']);
    const one = await search('q=zephyrine&limit=1');
    expect(one.results).toHaveLength(1);
    expect(one.count).toBe(1);
  });

  it('needs read:leads, then limits a token to the types its scopes allow', async () => {
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    const a = await search('q=zephyrine', leadsOnly);
    expect(a.results.map((r) => r.type)).toEqual(['lead']);
    // Search is lead data (results name their lead), so it needs read:leads itself.
    const contactsOnly = await t.createPat(org.orgId, org.ownerId, ['read:contacts']);
    const b = await refusedSearch('q=zephyrine', contactsOnly, 403);
    expect(b).toMatchObject({ code: 'scope_missing', required_scope: 'read:leads' });
    const withContacts = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'read:contacts']);
    const c = await search('q=zephyrine', withContacts);
    expect(c.results.map((r) => r.type).sort()).toEqual(['contact', 'lead']);
    const withDeals = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'read:opportunities']);
    const d = await search('q=zephyrine&types=contact,opportunity', withDeals);
    expect(d.results.map((r) => r.type)).toEqual(['opportunity']);
    const writeOnly = await t.createPat(org.orgId, org.ownerId, ['write:leads']);
    expect(await refusedSearch('q=zephyrine', writeOnly, 403)).toMatchObject({
      required_scope: 'read:leads',
    });
  });

  it('lets every role that can view leads search', async () => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    const body = await search('q=zephyrine', viewer);
    expect(body.results.length).toBeGreaterThan(0);
  });

  it('returns nothing for a query of punctuation only', async () => {
    for (const q of ['!!!', '&|:*', '...', '()']) {
      const body = await search(`q=${encodeURIComponent(q)}`);
      expect(body).toEqual({ results: [], count: 0 });
    }
  });

  it('treats tsquery syntax and SQL in the query as plain words (200, never 500)', async () => {
    const attempts = [
      "zephyrine' OR 1=1 --",
      'zephyrine & !holdings',
      'zephyrine:* | quokka',
      "'; drop table leads; --",
      'zephyrine <-> holdings',
      '\\x00 zephyrine',
      'a'.repeat(200),
    ];
    for (const q of attempts) await search(`q=${encodeURIComponent(q)}`);
    // Operators are dropped: "zephyrine & !holdings" means both words, and finds the lead named so.
    const body = await search(`q=${encodeURIComponent('zephyrine & !holdings')}`);
    expect(body.results.map((r) => r._id)).toContain(zephyrLead);
  });

  it('rejects bad input with field details', async () => {
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

  it('requires authentication', async () => {
    const res = await t.request('GET', '/api/v1/search?q=zephyrine');
    expect(res.status).toBe(401);
  });
});
