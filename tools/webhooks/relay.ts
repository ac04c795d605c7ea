// The outbox relay: moves committed outbox rows on to one delivery per matching active
// subscription, then enqueues 'webhook.deliver_batch' jobs naming the new deliveries, one per
// subscription and DELIVERY_BATCH_MAX deliveries. Rows are claimed with FOR UPDATE SKIP LOCKED, and
// the unique (outbox_event_id, webhook_id) index makes a second relay a no-op, so several API nodes
// may run it at once without delivering an event twice.
//
// A pass is one statement, whatever its size: the claim, the insert of the deliveries (the claimed
// rows joined to the subscriptions that listen to them) and the marking of the claimed rows, as
// data-modifying CTEs, atomic as any single statement. The events' data goes from the outbox row to
// the delivery row inside the database; the relay only sees the new ids. The worker's event loop is
// busy with hundreds of requests in flight, so every round trip a pass saves is one wait in its
// queue saved too: a pass used to be five (begin, claim, subscriptions, insert, mark, commit).
import { sql } from 'drizzle-orm';
import { outboxEvents } from '../../core/db/schema.ts';
import { rowsOf } from '../../core/db/sql.ts';
import type { Relay } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { DELIVERY_BATCH_MAX } from './deliver.ts';
import { webhookDeliveries, webhooks } from './tables.ts';

export interface RelayOptions {
  /** Outbox rows claimed per pass. */
  batchSize?: number;
}

export interface RelayResult {
  /** Outbox rows marked relayed by this call (with or without deliveries). */
  relayed: number;
  /** Ids of the deliveries this call created (and enqueued). */
  deliveryIds: string[];
}

/**
 * Outbox rows per pass. Small enough that the first deliveries of a burst are enqueued while the
 * rest are still being relayed (the workers wait for nothing but the first pass), large enough
 * that a pass's statement is shared by many rows: on the 2-core bench machine, 5,000 events were
 * relayed in 2.2 s by passes of 250 and in 1.1-1.2 s by passes of 1,000 (bench/results.md, issue 24
 * item 5); passes of 2,500 relayed them in 0.5 s without more deliveries per second, the sends being
 * the bound by then.
 */
const BATCH_SIZE = 1000;

/**
 * A new delivery's id, made in the statement (how many deliveries a pass makes is known only there):
 * the ObjectId form of core/ids.ts, 4 bytes of seconds then 8 random bytes (from gen_random_uuid,
 * PostgreSQL's own CSPRNG) where newId has 5 per-process bytes and a counter. It sorts by second
 * like every other id; within the second it is random, which nothing orders by.
 */
const NEW_ID = sql`lpad(to_hex(floor(extract(epoch from clock_timestamp()))::bigint), 8, '0')
  || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16)`;

function relayedRow(rows: unknown[]): { relayed: number; created: Array<{ id: string; webhookId: string }> } {
  const [row] = rows;
  if (typeof row !== 'object' || row === null || !('relayed' in row) || !('created' in row))
    throw new Error('unexpected row from the relay statement');
  const created = typeof row.created === 'string' ? JSON.parse(row.created) : row.created;
  if (!Array.isArray(created)) throw new Error('unexpected deliveries from the relay statement');
  return {
    relayed: Number(row.relayed),
    created: created.map((pair: unknown) => {
      if (!Array.isArray(pair)) throw new Error('unexpected delivery from the relay statement');
      return { id: String(pair[0]), webhookId: String(pair[1]) };
    }),
  };
}

/** One relay pass in one statement; enqueues the created deliveries after it committed. */
async function relayBatch(services: Services, options: RelayOptions = {}): Promise<RelayResult> {
  const batchSize = options.batchSize ?? BATCH_SIZE;
  const now = new Date().toISOString();
  const result = relayedRow(
    rowsOf(
      await services.db.system.execute(sql`
        with claimed as (
          select ${outboxEvents.id} as id, ${outboxEvents.orgId} as org_id, ${outboxEvents.event} as event,
                 ${outboxEvents.data} as data
          from ${outboxEvents}
          where ${outboxEvents.relayedAt} is null
          order by ${outboxEvents.createdAt}, ${outboxEvents.id}
          limit ${batchSize}
          for update skip locked
        ), marked as (
          update ${outboxEvents} set relayed_at = ${now}::timestamptz
          from claimed where ${outboxEvents.id} = claimed.id
          returning 1
        ), created as (
          insert into ${webhookDeliveries}
            (id, org_id, webhook_id, event, outbox_event_id, data, status, next_attempt_at)
          select ${NEW_ID}, claimed.org_id, ${webhooks.id}, claimed.event, claimed.id, claimed.data,
                 'pending', ${now}::timestamptz
          from claimed
          join ${webhooks} on ${webhooks.orgId} = claimed.org_id and ${webhooks.isActive}
            and claimed.event = any(${webhooks.events})
          on conflict (outbox_event_id, webhook_id) do nothing
          returning id, webhook_id
        )
        select (select count(*) from marked) as relayed,
               (select coalesce(json_agg(json_build_array(id, webhook_id)), '[]'::json) from created) as created`),
    ),
  );
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
