// The test kit of tools/webhooks (test/README.md "Test kits"): a victim subscription with its
// delivery log, and a finished delivery (pending ones are refused a replay).
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { webhookDeliveries, webhooks } from '../../tools/webhooks/tables.ts';
import { defineKit, type KitScope, NO_BODY } from '../fixtures/kit.ts';

async function insertWebhook({ t, org }: KitScope): Promise<string> {
  const id = newId();
  await t.services.db.system.insert(webhooks).values({
    id,
    orgId: org.orgId,
    url: 'https://victim.example.test/hook',
    events: ['lead.created'],
    secret: 'victim-signing-secret',
    createdBy: org.ownerId,
  });
  return id;
}

export const kit = defineKit({
  area: 'webhooks',
  bodies: {
    create_webhook: {
      body: {
        name: 'Hook',
        url: 'https://example.com/hook',
        events: ['lead.created'],
        secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0',
      },
      text: 'secret',
      free: 'events',
    },
    update_webhook: { body: { url: 'https://example.com/hook' }, text: 'url', free: 'events' },
    delete_webhook: NO_BODY,
    test_webhook: NO_BODY,
    replay_webhook_delivery: NO_BODY,
  },
  victims: {
    // The subscription and its delivery log: a test delivery or a deletion would change either.
    '/webhooks': async (scope) => {
      const { t } = scope;
      const id = await insertWebhook(scope);
      return {
        id,
        read: async () => ({
          webhook: await t.services.db.system.select().from(webhooks).where(eq(webhooks.id, id)),
          deliveries: await t.services.db.system
            .select()
            .from(webhookDeliveries)
            .where(eq(webhookDeliveries.webhookId, id)),
        }),
      };
    },
    // A finished delivery, so the owning organization's replay is accepted (pending ones are refused).
    '/webhooks/deliveries': async (scope) => {
      const { t, org } = scope;
      const webhookId = await insertWebhook(scope);
      const id = newId();
      await t.services.db.system.insert(webhookDeliveries).values({
        id,
        orgId: org.orgId,
        webhookId,
        event: 'lead.created',
        data: { name: 'Victim lead' },
        status: 'failed',
      });
      return {
        id,
        read: () => t.services.db.system.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)),
      };
    },
  },
  fuzz: {
    seed: async ({ t, token, seed, collect, firstId }) => {
      const hook = firstId(
        await seed('/api/v1/webhooks', {
          name: 'Fuzz hook',
          url: 'https://example.com/hook',
          events: ['lead.created'],
        }),
      );
      const test = await t.request('POST', `/api/v1/webhooks/test/${hook}`, { token });
      collect('/api/v1/webhooks/deliveries', await test.json());
    },
    pools: { 'webhooks/test': 'webhooks' },
  },
});

// Seed builders for the suites that need a subscription or a delivery the API cannot make as they
// need it: a target on this machine without WEBHOOK_ALLOW_PRIVATE_TARGETS, an inactive subscription
// from the start without the outbox events its create and update would write, or a delivery left
// pending by a previous process. Each writes the one row, with typed overrides.
type WebhookRow = typeof webhooks.$inferInsert;
type DeliveryRow = typeof webhookDeliveries.$inferInsert;

/** A subscription of `org` (to lead.created at a public placeholder URL unless overridden); its id. */
export async function seedWebhook(
  // Only the services: a test that builds its services by hand (test/services/bullmq.test.ts) seeds here too.
  t: Pick<KitScope['t'], 'services'>,
  org: Pick<KitScope['org'], 'orgId'>,
  overrides: Partial<Omit<WebhookRow, 'orgId'>> = {},
): Promise<string> {
  const id = overrides.id ?? newId();
  await t.services.db.system.insert(webhooks).values({
    url: 'https://hooks.example.com/crm',
    events: ['lead.created'],
    secret: 'whsec_test',
    ...overrides,
    id,
    orgId: org.orgId,
  });
  return id;
}

/** A delivery of `webhookId` to `org` (a lead.created, pending unless overridden); its id. */
export async function seedWebhookDelivery(
  t: KitScope['t'],
  org: Pick<KitScope['org'], 'orgId'>,
  overrides: Partial<Omit<DeliveryRow, 'orgId'>> & Pick<DeliveryRow, 'webhookId'>,
): Promise<string> {
  const id = overrides.id ?? newId();
  await t.services.db.system.insert(webhookDeliveries).values({
    event: 'lead.created',
    data: { _id: newId() },
    ...overrides,
    id,
    orgId: org.orgId,
  });
  return id;
}
