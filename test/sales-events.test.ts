// Locks in that every sales-core event (contacts, opportunities, activities, calls, tasks) reaches a real HTTPS receiver, signed, with the record it is about.
import { describe, expect } from 'vitest';
import { CATALOGUE } from '../tools/index.ts';
import { harnessTest } from './fixtures/harness-test.ts';
import {
  type DeliveredEvent,
  decodeDelivery,
  startEventReceiver,
  type TestContext,
  type TestOrg,
} from './fixtures/index.ts';
import { json } from './helpers.ts';
import type { ReceivedRequest } from './support/https-receiver.ts';

const SECRET = 'sales-events-secret-0123456789';
const SALES_EVENTS = CATALOGUE.eventNames.filter((e) =>
  /^(contact|opportunity|activity|call|task)\./.test(e),
);

const test = harnessTest(() =>
  startEventReceiver({ name: 'Sales', events: SALES_EVENTS, secret: SECRET }),
).extend('receiver', { scope: 'file' }, async ({ harness }) => harness.receiver);

async function call<T>(
  t: TestContext,
  org: TestOrg,
  method: string,
  path: string,
  body?: unknown,
  status = 200,
): Promise<T> {
  const res = await t.request(method, `/api/v1${path}`, { token: org.token, body });
  const payload = await json<T>(res);
  expect(res.status, JSON.stringify(payload)).toBe(status);
  return payload;
}

const decode = (hit: ReceivedRequest): DeliveredEvent => decodeDelivery(hit, SECRET);

describe('sales-core events over webhooks', () => {
  test('delivers each event, signed, about the record that changed', async ({ t, org, receiver }) => {
    const { lead } = await call<{ lead: { _id: string } }>(
      t,
      org,
      'POST',
      '/leads',
      { name: 'Eventful Ltd' },
      201,
    );
    const { contact } = await call<{ contact: { _id: string } }>(
      t,
      org,
      'POST',
      '/contacts',
      { lead_id: lead._id, name: 'Ada Lovelace', emails: [{ email: 'ada@example.test', type: 'work' }] },
      201,
    );
    await call(t, org, 'PATCH', `/contacts/${contact._id}`, { title: 'CTO' });
    await call(t, org, 'DELETE', `/contacts/${contact._id}`);

    const { opportunity: won } = await call<{ opportunity: { _id: string } }>(
      t,
      org,
      'POST',
      '/opportunities',
      { lead_id: lead._id, value: 1200, currency: 'EUR', confidence: 50 },
      201,
    );
    await call(t, org, 'PATCH', `/opportunities/${won._id}`, { status: 'won' });
    const { opportunity: lost } = await call<{ opportunity: { _id: string } }>(
      t,
      org,
      'POST',
      '/opportunities',
      { lead_id: lead._id, value: 300 },
      201,
    );
    await call(t, org, 'PATCH', `/opportunities/${lost._id}`, { status: 'lost' });

    const { activity } = await call<{ activity: { _id: string } }>(
      t,
      org,
      'POST',
      '/activities',
      { lead_id: lead._id, type: 'call', direction: 'outbound', duration_seconds: 95, outcome: 'connected' },
      201,
    );
    const { task } = await call<{ task: { _id: string } }>(
      t,
      org,
      'POST',
      '/tasks',
      { lead_id: lead._id, text: 'Send the proposal' },
      201,
    );
    await call(t, org, 'POST', `/tasks/${task._id}/complete`);

    const expected: [string, string][] = [
      ['contact.created', contact._id],
      ['contact.updated', contact._id],
      ['contact.deleted', contact._id],
      ['opportunity.created', won._id],
      ['opportunity.updated', won._id],
      ['opportunity.won', won._id],
      ['opportunity.created', lost._id],
      ['opportunity.updated', lost._id],
      ['opportunity.lost', lost._id],
      ['activity.created', activity._id],
      ['call.completed', activity._id],
      ['task.created', task._id],
      ['task.completed', task._id],
    ];
    const hits = await receiver.waitForRequests(expected.length, 20_000);
    const delivered = hits.map(decode).map((d) => [d.event, d.data._id] as [string, unknown]);
    const sortPairs = (pairs: [string, unknown][]) =>
      pairs.map(([e, id]) => `${e} ${String(id)}`).sort((a, b) => a.localeCompare(b));
    expect(sortPairs(delivered)).toEqual(sortPairs(expected));
    const covered = new Set(delivered.map(([event]) => event));
    expect([...covered].sort()).toEqual([...SALES_EVENTS].sort());
  });
});
