// Locks in the outbox's daily expiry (core/outbox-expiry.ts): rows relayed and made more than OUTBOX_KEEP_DAYS ago are deleted, in batches, by their id's time; newer rows and rows not yet relayed stay, however old.
import { inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { outboxEvents } from '../core/db/schema.ts';
import { idFloorAt, newId } from '../core/ids.ts';
import { deleteRelayedOutboxRows, OUTBOX_KEEP_DAYS } from '../core/outbox-expiry.ts';
import { fileTest } from './fixtures/file-test.ts';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'starter' });
const DAY = 24 * 60 * 60 * 1000;

describe('idFloorAt', () => {
  it('is at most every id made at or after the instant, and above every id made before its second', () => {
    const at = new Date('2026-11-20T10:00:00.500Z');
    expect(newId(at) >= idFloorAt(at)).toBe(true);
    expect(newId(new Date(at.getTime() + 1000)) > idFloorAt(at)).toBe(true);
    expect(newId(new Date(at.getTime() - 1000)) < idFloorAt(at)).toBe(true);
  });
});

describe('deleteRelayedOutboxRows', () => {
  test('deletes the old relayed rows only', async ({ t, org }) => {
    const now = new Date('2026-11-27T12:00:00Z');
    const old = new Date(now.getTime() - (OUTBOX_KEEP_DAYS + 1) * DAY);
    const recent = new Date(now.getTime() - (OUTBOX_KEEP_DAYS - 1) * DAY);
    const row = (made: Date, relayedAt: Date | null) => ({
      id: newId(made),
      orgId: org.orgId,
      event: 'lead.created',
      data: { made: made.toISOString() },
      createdAt: made,
      relayedAt,
    });
    const oldRelayed = Array.from({ length: 3 }, () => row(old, new Date(old.getTime() + 1000)));
    const oldPending = row(old, null);
    const recentRelayed = row(recent, recent);
    const rows = [...oldRelayed, oldPending, recentRelayed];
    await t.services.db.system.insert(outboxEvents).values(rows);

    expect(await deleteRelayedOutboxRows(t.services, now)).toBe(3);
    const left = await t.services.db.system
      .select({ id: outboxEvents.id })
      .from(outboxEvents)
      .where(
        inArray(
          outboxEvents.id,
          rows.map((r) => r.id),
        ),
      );
    expect(left.map((r) => r.id).sort()).toEqual([oldPending.id, recentRelayed.id].sort());
    // Nothing left to delete: a second run is a no-op.
    expect(await deleteRelayedOutboxRows(t.services, now)).toBe(0);
  });
});
