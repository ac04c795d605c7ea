// Locks in the names the trash list shows for records without a name column: opportunities, activities and custom object records.
import { describe, expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { activities } from '../../tools/activities/tables.ts';
import { customObjectRecords, customObjects } from '../../tools/custom-objects/tables.ts';
import { leads } from '../../tools/leads/tables.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import { fileTest } from '../fixtures/file-test.ts';
import { readOutput, TOOL } from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

describe('trash item names', () => {
  test('derives a readable name from each record', async ({ t, org }) => {
    const db = t.services.db.system;
    const deleted = { deletedAt: new Date(), deletedBy: org.ownerId };
    const leadId = newId();
    await db.insert(leads).values({ id: leadId, orgId: org.orgId, name: 'Live parent' });
    const ids = {
      noted: newId(),
      staged: newId(),
      bare: newId(),
      email: newId(),
      call: newId(),
      record: newId(),
    };
    await db.insert(opportunities).values([
      { id: ids.noted, orgId: org.orgId, leadId, note: 'Annual renewal', value: 10, ...deleted },
      { id: ids.staged, orgId: org.orgId, leadId, pipelineStage: 'Proposal', value: 10, ...deleted },
      { id: ids.bare, orgId: org.orgId, leadId, value: 1250.5, currency: 'EUR', ...deleted },
    ]);
    await db.insert(activities).values([
      {
        id: ids.email,
        orgId: org.orgId,
        leadId,
        type: 'email',
        fields: { subject: 'Quote attached' },
        ...deleted,
      },
      { id: ids.call, orgId: org.orgId, leadId, type: 'call', fields: { direction: 'inbound' }, ...deleted },
    ]);
    const objectId = newId();
    await db.insert(customObjects).values({ id: objectId, orgId: org.orgId, name: 'Vehicle' });
    await db
      .insert(customObjectRecords)
      .values({ id: ids.record, orgId: org.orgId, objectId, values: { model: 'VW Golf' }, ...deleted });

    const res = await t.request('GET', '/api/v1/trash?limit=100', { token: org.token });
    expect(res.status).toBe(200);
    const { items } = await readOutput(res, TOOL.list_trash);
    const nameOf = (id: string) => items.find((i) => i._id === id)?.name;
    expect(nameOf(ids.noted)).toBe('Annual renewal');
    expect(nameOf(ids.staged)).toBe('Proposal');
    expect(nameOf(ids.bare)).toBe('1250.50 EUR');
    expect(nameOf(ids.email)).toBe('email: Quote attached');
    expect(nameOf(ids.call)).toBe('call');
    expect(nameOf(ids.record)).toBe('Vehicle: VW Golf');
  });
});
