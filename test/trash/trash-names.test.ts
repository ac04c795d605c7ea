// Locks in the names the trash list shows for records without a name column: opportunities, activities and custom object records.
import { describe, expect } from 'vitest';
import { seedActivities } from '../activities/seed.ts';
import { seedCustomObject, seedCustomObjectRecords } from '../custom-objects/seed.ts';
import { fileTest } from '../fixtures/file-test.ts';
import { readOutput, TOOL } from '../fixtures/index.ts';
import { seedLeads } from '../leads/seed.ts';
import { seedOpportunities } from '../opportunities/seed.ts';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

describe('trash item names', () => {
  test('derives a readable name from each record', async ({ t, org }) => {
    const deleted = { deletedAt: new Date(), deletedBy: org.ownerId };
    const [leadId = ''] = await seedLeads(t, org.orgId, [{ name: 'Live parent' }]);
    const [noted, staged, bare] = await seedOpportunities(t, org.orgId, [
      { leadId, note: 'Annual renewal', value: 10, ...deleted },
      { leadId, pipelineStage: 'Proposal', value: 10, ...deleted },
      { leadId, value: 1250.5, currency: 'EUR', ...deleted },
    ]);
    const [email, call] = await seedActivities(t, org.orgId, [
      { leadId, type: 'email', fields: { subject: 'Quote attached' }, ...deleted },
      { leadId, type: 'call', fields: { direction: 'inbound' }, ...deleted },
    ]);
    const objectId = await seedCustomObject(t, org.orgId, { name: 'Vehicle' });
    const [record] = await seedCustomObjectRecords(t, org.orgId, [
      { objectId, values: { model: 'VW Golf' }, ...deleted },
    ]);
    const ids = { noted, staged, bare, email, call, record };

    const res = await t.request('GET', '/api/v1/trash?limit=100', { token: org.token });
    expect(res.status).toBe(200);
    const { items } = await readOutput(res, TOOL.list_trash);
    const nameOf = (id: string | undefined) => items.find((i) => i._id === id)?.name;
    expect(nameOf(ids.noted)).toBe('Annual renewal');
    expect(nameOf(ids.staged)).toBe('Proposal');
    expect(nameOf(ids.bare)).toBe('1250.50 EUR');
    expect(nameOf(ids.email)).toBe('email: Quote attached');
    expect(nameOf(ids.call)).toBe('call');
    expect(nameOf(ids.record)).toBe('Vehicle: VW Golf');
  });
});
