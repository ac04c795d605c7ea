// Locks in that every sales-core event (contacts, opportunities, activities, calls, tasks) reaches a real HTTPS receiver, signed, with the record it is about.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../tools/index.ts';
import {
  type DeliveredEvent,
  decodeDelivery,
  type EventReceiver,
  startEventReceiver,
} from './fixtures/index.ts';
import { json, type TestContext, type TestOrg } from './helpers.ts';
import type { HttpsReceiver, ReceivedRequest } from './support/https-receiver.ts';

const SECRET = 'sales-events-secret-0123456789';
const SALES_EVENTS = CATALOGUE.eventNames.filter((e) =>
  /^(contact|opportunity|activity|call|task)\./.test(e),
);

let events: EventReceiver;
let receiver: HttpsReceiver;
let t: TestContext;
let org: TestOrg;

beforeAll(async () => {
  events = await startEventReceiver({ name: 'Sales', events: SALES_EVENTS, secret: SECRET });
  ({ t, org, receiver } = events);
});
afterAll(async () => {
  await events?.close();
});

async function call<T>(method: string, path: string, body?: unknown, status = 200): Promise<T> {
  const res = await t.request(method, `/api/v1${path}`, { token: org.token, body });
  const payload = await json<T>(res);
  expect(res.status, JSON.stringify(payload)).toBe(status);
  return payload;
}

const decode = (hit: ReceivedRequest): DeliveredEvent => decodeDelivery(hit, SECRET);

describe('sales-core events over webhooks', () => {
  it('delivers each event, signed, about the record that changed', async () => {
    const { lead } = await call<{ lead: { _id: string } }>('POST', '/leads', { name: 'Eventful Ltd' }, 201);
    const { contact } = await call<{ contact: { _id: string } }>(
      'POST',
      '/contacts',
      { lead_id: lead._id, name: 'Ada Lovelace', emails: [{ email: 'ada@example.test', type: 'work' }] },
      201,
    );
    await call('PATCH', `/contacts/${contact._id}`, { title: 'CTO' });
    await call('DELETE', `/contacts/${contact._id}`);

    const { opportunity: won } = await call<{ opportunity: { _id: string } }>(
      'POST',
      '/opportunities',
      { lead_id: lead._id, value: 1200, currency: 'EUR', confidence: 50 },
      201,
    );
    await call('PATCH', `/opportunities/${won._id}`, { status: 'won' });
    const { opportunity: lost } = await call<{ opportunity: { _id: string } }>(
      'POST',
      '/opportunities',
      { lead_id: lead._id, value: 300 },
      201,
    );
    await call('PATCH', `/opportunities/${lost._id}`, { status: 'lost' });

    const { activity } = await call<{ activity: { _id: string } }>(
      'POST',
      '/activities',
      { lead_id: lead._id, type: 'call', direction: 'outbound', duration_seconds: 95, outcome: 'connected' },
      201,
    );
    const { task } = await call<{ task: { _id: string } }>(
      'POST',
      '/tasks',
      { lead_id: lead._id, text: 'Send the proposal' },
      201,
    );
    await call('POST', `/tasks/${task._id}/complete`);

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
