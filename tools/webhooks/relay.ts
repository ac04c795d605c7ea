// The outbox relay: moves committed outbox rows on to one delivery per matching active
// subscription, then enqueues a 'webhook.deliver' job per new delivery. Rows are claimed with
// FOR UPDATE SKIP LOCKED, and the unique (outbox_event_id, webhook_id) index makes a second relay
// a no-op, so several API nodes may run it at once without delivering an event twice.
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import { outboxEvents } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import type { Relay } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { webhookDeliveries, webhooks } from './tables.ts';

export interface RelayOptions {
  /** Outbox rows claimed per transaction. */
  batchSize?: number;
}

export interface RelayResult {
  /** Outbox rows marked relayed by this call (with or without deliveries). */
  relayed: number;
  /** Ids of the deliveries this call created (and enqueued). */
  deliveryIds: string[];
}

/** One relay pass in one system transaction; enqueues the created deliveries after the commit. */
async function relayBatch(services: Services, options: RelayOptions = {}): Promise<RelayResult> {
  const batchSize = options.batchSize ?? 200;
  const now = new Date();
  const result = await services.db.transaction(async (tx) => {
    const rows = await tx
      .select({
        id: outboxEvents.id,
        orgId: outboxEvents.orgId,
        event: outboxEvents.event,
        data: outboxEvents.data,
      })
      .from(outboxEvents)
      .where(isNull(outboxEvents.relayedAt))
      .orderBy(asc(outboxEvents.createdAt), asc(outboxEvents.id))
      .limit(batchSize)
      .for('update', { skipLocked: true });
    if (rows.length === 0) return { relayed: 0, deliveryIds: [] };
    const orgIds = [...new Set(rows.map((r) => r.orgId))];
    const subscriptions = await tx
      .select({ id: webhooks.id, orgId: webhooks.orgId, events: webhooks.events })
      .from(webhooks)
      .where(and(inArray(webhooks.orgId, orgIds), eq(webhooks.isActive, true)));
    const values = rows.flatMap((row) =>
      subscriptions
        .filter((s) => s.orgId === row.orgId && s.events.includes(row.event))
        .map((s) => ({
          id: newId(),
          orgId: row.orgId,
          webhookId: s.id,
          event: row.event,
          outboxEventId: row.id,
          data: row.data,
          status: 'pending',
          nextAttemptAt: now,
        })),
    );
    const created =
      values.length === 0
        ? []
        : await tx
            .insert(webhookDeliveries)
            .values(values)
            .onConflictDoNothing({ target: [webhookDeliveries.outboxEventId, webhookDeliveries.webhookId] })
            .returning({ id: webhookDeliveries.id });
    await tx
      .update(outboxEvents)
      .set({ relayedAt: now })
      .where(
        inArray(
          outboxEvents.id,
          rows.map((r) => r.id),
        ),
      );
    return { relayed: rows.length, deliveryIds: created.map((c) => c.id) };
  });
  // One enqueue call per batch. The delivery rows are durable: a failed enqueue (Redis down) is
  // picked up by the sweeper.
  try {
    await services.queue.enqueueMany(
      'webhook.deliver',
      result.deliveryIds.map((deliveryId) => ({ payload: { deliveryId }, options: { jobId: deliveryId } })),
    );
  } catch (err) {
    services.logger.warn(
      { err, deliveries: result.deliveryIds.length },
      'could not enqueue deliveries; the sweeper will retry',
    );
  }
  return result;
}

/** The brief's entry point: one relay pass, returning the ids of the deliveries it created. */
export async function relayOutbox(services: Services, options: RelayOptions = {}): Promise<string[]> {
  return (await relayBatch(services, options)).deliveryIds;
}

/** The runtime's relay loop runs this; a full batch means more rows are waiting, so it runs again at once. */
export const outboxRelay: Relay = {
  name: 'outbox relay',
  async pass(services) {
    const batchSize = 200;
    const { relayed } = await relayBatch(services, { batchSize });
    return relayed === batchSize;
  },
};
