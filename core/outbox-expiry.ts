// The outbox keeps a committed event (core/events.ts) until the relay (tools/webhooks/relay.ts) has
// moved it on to its deliveries, which carry the event's data from then on; nothing reads a relayed
// row again. This daily job deletes the rows relayed and created more than OUTBOX_KEEP_DAYS ago, so
// the table holds days of events instead of every event ever. A row not yet relayed is never
// deleted, however old (a relay down for a week still delivers it).
import { sql } from 'drizzle-orm';
import { outboxEvents } from './db/schema.ts';
import { countOf } from './db/sql.ts';
import { idFloorAt } from './ids.ts';
import type { Services } from './services.ts';

/** Days a relayed event stays in the outbox (for an operator looking at what was just emitted). */
export const OUTBOX_KEEP_DAYS = 7;
/** Rows one statement deletes, so a first run on a large table is many short transactions. */
const DELETE_BATCH = 10_000;

/**
 * Deletes the outbox rows relayed and created before `now` - OUTBOX_KEEP_DAYS; returns how many.
 * Ids start with their creation second, so the rows made before the cutoff are the oldest range of
 * the primary key (idFloorAt), read from that end instead of a scan of the whole table.
 */
export async function deleteRelayedOutboxRows(services: Services, now = new Date()): Promise<number> {
  const floor = idFloorAt(new Date(now.getTime() - OUTBOX_KEEP_DAYS * 24 * 60 * 60 * 1000));
  const o = outboxEvents;
  let deleted = 0;
  for (;;) {
    const n = countOf(
      await services.db.system.execute(sql`
        with gone as (
          delete from ${o} where ${o.id} in (
            select ${o.id} from ${o}
            where ${o.id} < ${floor}::text and ${o.relayedAt} is not null
            order by ${o.id} limit ${DELETE_BATCH})
          returning 1)
        select count(*)::int as n from gone`),
    );
    deleted += n;
    if (n < DELETE_BATCH) return deleted;
  }
}
