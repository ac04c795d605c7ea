// Locks in the outbox relay: one delivery per committed event and matching active subscription, none for rolled-back changes, never twice.
import { eq, inArray } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents } from '../core/db/schema.ts';
import { recordEvent } from '../core/events.ts';
import { relayOutbox } from '../tools/webhooks/relay.ts';
import { webhookDeliveries } from '../tools/webhooks/tables.ts';
import { startBackgroundWork } from '../workers/runtime.ts';
import { leadCreatedPayload, startReceiverContext } from './fixtures/events.ts';
import { fileTest } from './fixtures/file-test.ts';
import { harnessTest } from './fixtures/harness-test.ts';
import { json, type TestContext, type TestOrg } from './helpers.ts';
import { seedWebhook } from './webhooks/kit.ts';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'starter' });

const subscribe = (t: TestContext, orgId: string, events: string[], isActive = true): Promise<string> =>
  seedWebhook(t, { orgId }, { events, isActive });

async function createLead(t: TestContext, org: TestOrg, name: string, token = org.token): Promise<string> {
  const res = await t.request('POST', '/api/v1/leads', { token, body: { name } });
  expect(res.status).toBe(201);
  return (await json<{ lead: { _id: string } }>(res)).lead._id;
}

async function deliveriesOf(t: TestContext, webhookId: string) {
  return t.services.db.system
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.webhookId, webhookId));
}

describe('relayOutbox', () => {
  test('creates exactly one delivery for the matching active subscription of the organization only', async ({
    t,
    org,
    other,
  }) => {
    const matching = await subscribe(t, org.orgId, ['lead.created', 'lead.updated']);
    const inactive = await subscribe(t, org.orgId, ['lead.created'], false);
    const otherEvents = await subscribe(t, org.orgId, ['contact.created']);
    const otherOrg = await subscribe(t, other.orgId, ['lead.created']);

    const leadId = await createLead(t, org, 'Acme');
    const created = await relayOutbox(t.services);

    const rows = await deliveriesOf(t, matching);
    expect(rows).toHaveLength(1);
    expect(created).toEqual([rows[0]?.id]);
    expect(rows[0]).toMatchObject({
      orgId: org.orgId,
      event: 'lead.created',
      status: 'pending',
      attempts: [],
    });
    expect(rows[0]?.data).toMatchObject({ _id: leadId, name: 'Acme' });
    expect(rows[0]?.nextAttemptAt).toBeInstanceOf(Date);
    expect(await deliveriesOf(t, inactive)).toHaveLength(0);
    expect(await deliveriesOf(t, otherEvents)).toHaveLength(0);
    expect(await deliveriesOf(t, otherOrg)).toHaveLength(0);

    const [event] = await t.services.db.system
      .select()
      .from(outboxEvents)
      .where(eq(outboxEvents.id, rows[0]?.outboxEventId ?? ''));
    expect(event?.relayedAt).toBeInstanceOf(Date);
  });

  test('marks events of organizations without subscriptions relayed and creates nothing', async ({
    t,
    org,
  }) => {
    const lonely = await t.createOrg({ name: 'No Hooks' });
    await createLead(t, org, 'Quiet', lonely.token);
    const before = await t.services.db.system.select({ id: webhookDeliveries.id }).from(webhookDeliveries);
    expect(await relayOutbox(t.services)).toEqual([]);
    const events = await t.services.db.system
      .select()
      .from(outboxEvents)
      .where(eq(outboxEvents.orgId, lonely.orgId));
    expect(events).toHaveLength(1);
    expect(events[0]?.relayedAt).toBeInstanceOf(Date);
    const after = await t.services.db.system.select({ id: webhookDeliveries.id }).from(webhookDeliveries);
    expect(after).toHaveLength(before.length);
  });

  test('leaves no outbox row and no delivery for a rolled-back change', async ({ t, org }) => {
    const hook = await subscribe(t, org.orgId, ['lead.created']);
    const rejected = await t.request('POST', '/api/v1/leads', { token: org.token, body: { name: '' } });
    expect(rejected.status).toBe(400);
    await expect(
      t.services.db.withTenant(org.orgId, async (tx) => {
        await recordEvent(tx, org.orgId, 'lead.created', leadCreatedPayload('rolled-back'));
        throw new Error('abort the change');
      }),
    ).rejects.toThrow('abort the change');
    const pending = await t.services.db.system
      .select({ id: outboxEvents.id, data: outboxEvents.data })
      .from(outboxEvents)
      .where(eq(outboxEvents.orgId, org.orgId));
    expect(pending.some((row) => row.data._id === 'rolled-back')).toBe(false);
    expect(await relayOutbox(t.services)).toEqual([]);
    expect(await deliveriesOf(t, hook)).toHaveLength(0);
  });

  test('creates each delivery once when two relays run at the same time or an event is relayed again', async ({
    t,
    org,
  }) => {
    const hook = await subscribe(t, org.orgId, ['lead.updated', 'lead.created']);
    const leadIds = await Promise.all(
      ['One', 'Two', 'Three', 'Four', 'Five'].map((name) => createLead(t, org, name)),
    );

    const [first, second] = await Promise.all([relayOutbox(t.services), relayOutbox(t.services)]);
    const all = [...first, ...second];
    expect(new Set(all).size).toBe(all.length);
    const rows = await deliveriesOf(t, hook);
    expect(rows).toHaveLength(5);
    expect(rows.map((r) => r.data._id).sort()).toEqual([...leadIds].sort());
    expect(rows.every((r) => all.includes(r.id))).toBe(true);

    // A relay that crashed after inserting but before marking would see its rows again.
    const eventIds = rows.map((r) => r.outboxEventId ?? '');
    await t.services.db.system
      .update(outboxEvents)
      .set({ relayedAt: null })
      .where(inArray(outboxEvents.id, eventIds));
    expect(await relayOutbox(t.services)).toEqual([]);
    expect(await deliveriesOf(t, hook)).toHaveLength(5);
    const marked = await t.services.db.system
      .select({ relayedAt: outboxEvents.relayedAt })
      .from(outboxEvents)
      .where(inArray(outboxEvents.id, eventIds));
    expect(marked.every((r) => r.relayedAt instanceof Date)).toBe(true);
  });

  test('enqueues the created deliveries in webhook.deliver_batch jobs, run by the background workers', async ({
    t,
    org,
  }) => {
    const hook = await subscribe(t, org.orgId, ['lead.created']);
    const ran: string[] = [];
    const background = await startBackgroundWork(t.services, {
      relayIntervalMs: 20,
      sweepIntervalMs: 60_000,
      handlers: {
        'webhook.deliver_batch': async ({ deliveryIds }) => {
          ran.push(...deliveryIds);
        },
      },
    });
    try {
      await createLead(t, org, 'Queued');
      const deadline = Date.now() + 5000;
      let rows = await deliveriesOf(t, hook);
      while ((rows.length === 0 || !ran.includes(rows[0]?.id ?? '')) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        rows = await deliveriesOf(t, hook);
      }
      expect(rows).toHaveLength(1);
      expect(ran).toContain(rows[0]?.id);
    } finally {
      await background.stop();
    }
  });
});

// The workers block's own context, whose workers deliver to a local receiver: started on first use, closed with the file.
const workersTest = harnessTest(async () => {
  const started = await startReceiverContext();
  return { ...started, org: await started.t.createOrg({ plan: 'starter' }) };
});

describe('createTestContext({ withWorkers })', () => {
  workersTest(
    'relays a committed lead change and delivers it to the subscriber with its delivery id',
    async ({ t: w, org: owner, harness: { receiver } }) => {
      const webhookId = await seedWebhook(w, owner, {
        url: receiver.url('/leads'),
        secret: 'whsec_end_to_end',
      });
      const res = await w.request('POST', '/api/v1/leads', {
        token: owner.token,
        body: { name: 'Delivered' },
      });
      expect(res.status).toBe(201);
      const [hit] = await receiver.waitForRequests(1, 10_000);
      const [row] = await w.services.db.system
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.webhookId, webhookId));
      expect(hit?.headers['x-crm-delivery-id']).toBe(row?.id);
      expect(hit?.headers['x-crm-event']).toBe('lead.created');
      expect(JSON.parse(hit?.body.toString('utf8') ?? '{}')).toMatchObject({
        event: 'lead.created',
        data: { name: 'Delivered' },
      });
    },
  );
});
