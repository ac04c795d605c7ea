// The forecast area's tables: daily snapshots of the weighted pipeline and the commit, one row per
// organization, day, currency and month of expected close, and one row per organization and day
// the snapshot job ran (so "no pipeline that day" differs from "no snapshot that day").
import { bigint, date, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, orgId } from '../../core/db/schema.ts';

export const forecastSnapshots = pgTable(
  'forecast_snapshots',
  {
    orgId: orgId(),
    /** The UTC day the snapshot was taken. */
    snapshotOn: date('snapshot_on', { mode: 'string' }).notNull(),
    currency: text('currency').notNull(),
    /** The month of the opportunities' expected close date, `YYYY-MM`. */
    closeMonth: text('close_month').notNull(),
    /** Sum of value x confidence / 100 of the active opportunities, in minor units (rounded once per row). */
    weightedMinor: bigint('weighted_minor', { mode: 'bigint' }).notNull(),
    /** Sum of the value of the active opportunities at confidence >= 90, in minor units. */
    commitMinor: bigint('commit_minor', { mode: 'bigint' }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.snapshotOn, t.currency, t.closeMonth] })],
);

export const forecastSnapshotDays = pgTable(
  'forecast_snapshot_days',
  {
    orgId: orgId(),
    snapshotOn: date('snapshot_on', { mode: 'string' }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.snapshotOn] })],
);
