// The leased-row kit's own checks (core/leased-rows.ts); its claim, fence, retry, "outcome unknown"
// end and sweep are locked in through its senders: test/mail-outbox.test.ts, test/email/send.test.ts,
// test/email/restart.test.ts and test/workflows/engine.test.ts.
import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { claimOf, leasedTable, SENDER_LEASE } from '../core/leased-rows.ts';

const rows = pgTable('leased_rows_example', {
  id: text('id').primaryKey(),
  status: text('status').notNull(),
  attempts: integer('attempts').notNull(),
  nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
});

const noStatus = pgTable('leased_rows_no_status', {
  id: text('id').primaryKey(),
  attempts: integer('attempts').notNull(),
  nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
});

describe('leasedTable', () => {
  it('names the lease columns of the table, its claimed status and the senders policy by default', () => {
    const leased = leasedTable(rows, { due: 'nextAttemptAt', waiting: 'queued', claimed: 'sending' });
    expect(leased.columns).toEqual({
      id: rows.id,
      status: rows.status,
      attempts: rows.attempts,
      due: rows.nextAttemptAt,
    });
    expect(leased.dueStatuses).toEqual(['queued', 'sending']);
    expect(
      leasedTable(rows, { due: 'nextAttemptAt', waiting: 'active', claimed: 'active' }).dueStatuses,
    ).toEqual(['active']);
    expect(leased.policy).toBe(SENDER_LEASE);
    expect(SENDER_LEASE).toEqual({ maxAttempts: 3, retryDelaysMs: [60_000, 300_000], leaseMs: 300_000 });
    expect(claimOf(leased, { id: 'r1', attempts: 2 })).toEqual({ id: 'r1', status: 'sending', attempts: 2 });
  });

  it('throws as the sender loads when a lease column is not one of the table', () => {
    expect(() =>
      leasedTable(noStatus, { due: 'nextAttemptAt', waiting: 'queued', claimed: 'sending' }),
    ).toThrow('leased table: status is not a column');
  });
});
