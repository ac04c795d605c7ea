// The outbox relay: moves committed outbox rows on to one delivery per matching active
// subscription, then enqueues 'webhook.deliver_batch' jobs naming the new deliveries, one per
// subscription and DELIVERY_BATCH_MAX deliveries. Rows are claimed with FOR UPDATE SKIP LOCKED, and
// the unique (outbox_event_id, webhook_id) index makes a second relay a no-op, so several API nodes
// may run it at once without delivering an event twice.
//
// A pass is two statements in one transaction, whatever its size: the claim, joined to the
// subscriptions it matches, and the insert of the deliveries with the marking of the claimed rows.
// The events' data goes from the outbox row to the delivery row inside the database; the relay
// only sees ids.
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import { outboxEvents } from '../../core/db/schema.ts';
import { rowsOf } from '../../core/db/sql.ts';
import { newId } from '../../core/ids.ts';
import type { Relay } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { DELIVERY_BATCH_MAX } from './deliver.ts';
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

const BATCH_SIZE = 500;

const createdRow = (row: unknown): { id: string; webhookId: string } => {
  if (typeof row === 'object' && row !== null && 'id' in row && 'webhook_id' in row)
    return { id: String(row.id), webhookId: String(row.webhook_id) };
  throw new Error('unexpected row from the delivery insert');
};

/** One relay pass in one system transaction; enqueues the created deliveries after the commit. */
async function relayBatch(services: Services, options: RelayOptions = {}): Promise<RelayResult> {
  const batchSize = options.batchSize ?? BATCH_SIZE;
  const now = new Date();
  const result = await services.db.transaction(async (tx) => {
    // The claim locks the outbox rows only (the lock clause is the subquery's), and answers each
    // with the active subscriptions of its organization that listen to its event.
    const claimed = tx
      .select({ id: outboxEvents.id, orgId: outboxEvents.orgId, event: outboxEvents.event })
      .from(outboxEvents)
      .where(isNull(outboxEvents.relayedAt))
      .orderBy(asc(outboxEvents.createdAt), asc(outboxEvents.id))
      .limit(batchSize)
      .for('update', { skipLocked: true })
      .as('claimed');
    const matches = await tx
      .select({ outboxId: claimed.id, webhookId: webhooks.id })
      .from(claimed)
      .leftJoin(
        webhooks,
        and(
          eq(webhooks.orgId, claimed.orgId),
          eq(webhooks.isActive, true),
          sql`${claimed.event} = any(${webhooks.events})`,
        ),
      );
    if (matches.length === 0) return { relayed: 0, created: [] };
    const outboxIds = [...new Set(matches.map((m) => m.outboxId))];
    const pairs = matches.flatMap((m) =>
      m.webhookId === null ? [] : [{ id: newId(now), outbox_id: m.outboxId, webhook_id: m.webhookId }],
    );
    const mark = sql`update ${outboxEvents} set relayed_at = ${now.toISOString()}::timestamptz
      where ${outboxEvents.id} in ${outboxIds}`;
    if (pairs.length === 0) {
      await tx.execute(mark);
      return { relayed: outboxIds.length, created: [] };
    }
    // The marking rides along as a data-modifying CTE: one round trip for both writes.
    const inserted = await tx.execute(sql`
      with marked as (${mark})
      insert into ${webhookDeliveries}
        (id, org_id, webhook_id, event, outbox_event_id, data, status, next_attempt_at)
      select v.id, ${outboxEvents.orgId}, v.webhook_id, ${outboxEvents.event}, ${outboxEvents.id},
             ${outboxEvents.data}, 'pending', ${now.toISOString()}::timestamptz
      from jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb) as v(id text, outbox_id text, webhook_id text)
      join ${outboxEvents} on ${outboxEvents.id} = v.outbox_id
      on conflict (outbox_event_id, webhook_id) do nothing
      returning id, webhook_id`);
    return { relayed: outboxIds.length, created: rowsOf(inserted).map(createdRow) };
  });
  const bySubscription = new Map<string, string[]>();
  for (const { id, webhookId } of result.created) {
    const ids = bySubscription.get(webhookId);
    if (ids) ids.push(id);
    else bySubscription.set(webhookId, [id]);
  }
  const batches = [...bySubscription.values()].flatMap((ids) => {
    const chunks: string[][] = [];
    for (let from = 0; from < ids.length; from += DELIVERY_BATCH_MAX)
      chunks.push(ids.slice(from, from + DELIVERY_BATCH_MAX));
    return chunks;
  });
  // One enqueue call per pass. The delivery rows are durable: a failed enqueue (Redis down) is
  // picked up by the sweeper, one delivery at a time.
  try {
    await services.jobs.enqueueMany(
      'webhook.deliver_batch',
      batches.map((deliveryIds) => ({ payload: { deliveryIds } })),
    );
  } catch (err) {
    services.logger.warn(
      { err, deliveries: result.created.length },
      'could not enqueue deliveries; the sweeper will retry',
    );
  }
  return { relayed: result.relayed, deliveryIds: result.created.map((c) => c.id) };
}

/** The brief's entry point: one relay pass, returning the ids of the deliveries it created. */
export async function relayOutbox(services: Services, options: RelayOptions = {}): Promise<string[]> {
  return (await relayBatch(services, options)).deliveryIds;
}

/** The runtime's relay loop runs this; a full batch means more rows are waiting, so it runs again at once. */
export const outboxRelay: Relay = {
  name: 'outbox relay',
  async pass(services) {
    const { relayed } = await relayBatch(services, { batchSize: BATCH_SIZE });
    return relayed === BATCH_SIZE;
  },
};
