// Forecast accuracy: the daily snapshot of the weighted pipeline and the commit (written by the
// job in jobs.ts for every organization), and the comparison of the forecast taken at
// a period's start with the value won in the period. Money is exact: minor units as bigint
// (core/money.ts); only the ratios (accuracy, bias, MAPE) are numbers, rounded to 4 decimals.
import { and, eq, gte, lte, max, min } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { organizations } from '../../core/db/schema.ts';
import { divideRounded, fromMinor, parseMinor } from '../../core/money.ts';
import { sumOpenPipeline, sumWonByMonth } from '../opportunities/lookups.ts';
import { forecastSnapshotDays, forecastSnapshots } from './tables.ts';

/** Confidence at or above which an active opportunity counts in the commit. */
const COMMIT_CONFIDENCE = 90;
const RATIO_SCALE = 10_000n;

/** `YYYY`, `YYYY-Qn` (n 1-4) or `YYYY-MM` (01-12). */
export const PERIOD_PATTERN = /^\d{4}(-Q[1-4]|-(0[1-9]|1[0-2]))?$/;

/** The UTC day of an instant, `YYYY-MM-DD`. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------------
// Snapshot

/**
 * Writes `day`'s snapshot of every organization (or of one): the active, live opportunities with
 * an expected close date, summed per currency and month of close. Running it again the same day
 * replaces that day's rows, so there is never more than one snapshot per organization and day.
 */
export async function writeSnapshots(db: Executor, day: string, orgId?: string): Promise<number> {
  const rows = await sumOpenPipeline(db, COMMIT_CONFIDENCE, orgId);
  const values = rows.map((row) => ({
    orgId: row.orgId,
    snapshotOn: day,
    currency: row.currency,
    closeMonth: row.closeMonth,
    // value x confidence in minor units, divided by 100 once per row, half away from zero.
    weightedMinor: divideRounded(parseMinor(row.weighted, row.currency), 100n),
    commitMinor: parseMinor(row.commit, row.currency),
  }));
  const orgIds = orgId
    ? [orgId]
    : (await db.select({ id: organizations.id }).from(organizations)).map((org) => org.id);
  await db.transaction(async (tx) => {
    const dayFilter = (table: typeof forecastSnapshots | typeof forecastSnapshotDays) =>
      and(eq(table.snapshotOn, day), orgId ? eq(table.orgId, orgId) : undefined);
    await tx.delete(forecastSnapshots).where(dayFilter(forecastSnapshots));
    await tx.delete(forecastSnapshotDays).where(dayFilter(forecastSnapshotDays));
    if (orgIds.length > 0) {
      await tx
        .insert(forecastSnapshotDays)
        .values(orgIds.map((id) => ({ orgId: id, snapshotOn: day })))
        .onConflictDoNothing();
    }
    if (values.length > 0) await tx.insert(forecastSnapshots).values(values).onConflictDoNothing();
  });
  return values.length;
}

// ---------------------------------------------------------------------------------------------
// Periods

export interface Period {
  period: string;
  kind: 'year' | 'quarter' | 'month';
  startsOn: string;
  /** Last day of the period (inclusive). */
  endsOn: string;
  /** The months of the period, `YYYY-MM`. */
  months: string[];
}

const pad = (n: number) => String(n).padStart(2, '0');
const monthKey = (year: number, month: number) => `${year}-${pad(month)}`;

function lastDay(year: number, month: number): string {
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return `${monthKey(year, month)}-${pad(days)}`;
}

/** A valid period string (PERIOD_PATTERN) as its days and months. */
export function parsePeriod(period: string): Period {
  const year = Number(period.slice(0, 4));
  let first = 1;
  let count = 12;
  let kind: Period['kind'] = 'year';
  if (period.length === 7 && period[5] === 'Q') {
    kind = 'quarter';
    first = (Number(period[6]) - 1) * 3 + 1;
    count = 3;
  } else if (period.length === 7) {
    kind = 'month';
    first = Number(period.slice(5, 7));
    count = 1;
  }
  const months = Array.from({ length: count }, (_, i) => monthKey(year, first + i));
  return {
    period,
    kind,
    startsOn: `${monthKey(year, first)}-01`,
    endsOn: lastDay(year, first + count - 1),
    months,
  };
}

// ---------------------------------------------------------------------------------------------
// Shapes

const money = (what: string) =>
  z.number().nullable().describe(`${what}, in the currency's major unit (exact to its minor unit)`);
const ratio = (what: string) =>
  z.number().nullable().describe(`${what}, rounded to 4 decimals; null when nothing was won`);

const figuresSchema = z.object({
  currency: z.string().describe('ISO 4217 currency code'),
  forecast: money(
    'Weighted pipeline (value x confidence / 100) expected to close in the span, as snapshotted at the period start; null without a snapshot',
  ),
  commit: money(
    'Value of the opportunities at confidence >= 90 expected to close in the span, as snapshotted; null without a snapshot',
  ),
  actual: z.number().describe("Value won with a close date in the span, in the currency's major unit"),
  accuracy: ratio('1 - |forecast - actual| / actual'),
  bias: ratio('(forecast - actual) / actual: positive means over-forecast'),
});

const currencySchema = figuresSchema.extend({
  mape: ratio(
    'Mean absolute percentage error across the months (quarters and years): mean of |forecast - actual| / actual over months with a win; null for a month period',
  ),
});

const monthSchema = z.object({
  month: z.string().describe('The month, YYYY-MM'),
  currencies: z.array(figuresSchema).describe('The figures of the month per currency'),
});

export const accuracySchema = z.object({
  period: z.string().describe('The period asked for: YYYY, YYYY-Qn or YYYY-MM'),
  starts_on: z.string().describe('First day of the period (YYYY-MM-DD)'),
  ends_on: z.string().describe('Last day of the period (YYYY-MM-DD)'),
  complete: z.boolean().describe('Whether the period has ended (its actuals are final)'),
  snapshot_on: z
    .string()
    .nullable()
    .describe(
      'Day of the snapshot the forecast comes from: the latest on or before starts_on; null when there is none',
    ),
  snapshots_since: z
    .string()
    .describe(
      "The organization's first snapshot day (YYYY-MM-DD): periods starting before it have no forecast. The first " +
        'request of an organization takes that first snapshot itself; the daily job takes the next ones',
    ),
  note: z
    .string()
    .nullable()
    .describe('Why the forecast figures are null, in a sentence (no snapshot by the period start), or null'),
  currencies: z.array(currencySchema).describe('Figures of the whole period, one entry per currency'),
  months: z
    .array(monthSchema)
    .describe('Figures month by month (quarters and years); empty for a month period'),
});
export type Accuracy = z.output<typeof accuracySchema>;

// ---------------------------------------------------------------------------------------------
// Accuracy

interface Cell {
  forecast: bigint | null;
  commit: bigint | null;
  actual: bigint;
}

/** |a| / b (b > 0) as a number rounded to 4 decimals, exact from integers. */
function ratioOf(numerator: bigint, denominator: bigint): number {
  return Number(divideRounded(numerator * RATIO_SCALE, denominator)) / Number(RATIO_SCALE);
}

function figures(currency: string, cell: Cell) {
  const { forecast, commit, actual } = cell;
  const measured = forecast !== null && actual > 0n;
  const diff = measured ? forecast - actual : 0n;
  return {
    currency,
    forecast: forecast === null ? null : fromMinor(forecast, currency),
    commit: commit === null ? null : fromMinor(commit, currency),
    actual: fromMinor(actual, currency),
    accuracy: measured
      ? Number(RATIO_SCALE - divideRounded((diff < 0n ? -diff : diff) * RATIO_SCALE, actual)) /
        Number(RATIO_SCALE)
      : null,
    bias: measured ? ratioOf(diff, actual) : null,
  };
}

/**
 * The organization's first snapshot day. An organization that never had one (a new one, before the
 * daily job first ran for it) gets its first snapshot now, so its accuracy is not null for days
 * with no hint why: the answer says from when snapshots exist.
 */
async function firstSnapshotDay(db: Executor, orgId: string, now: Date): Promise<string> {
  const [first] = await db
    .select({ day: min(forecastSnapshotDays.snapshotOn) })
    .from(forecastSnapshotDays)
    .where(eq(forecastSnapshotDays.orgId, orgId));
  if (first?.day) return first.day;
  const today = utcDay(now);
  await writeSnapshots(db, today, orgId);
  return today;
}

/** The forecast of `period` (as snapshotted at its start) against what was won in it. */
export async function forecastAccuracy(
  db: Executor,
  orgId: string,
  period: Period,
  now: Date,
): Promise<Accuracy> {
  const snapshotsSince = await firstSnapshotDay(db, orgId, now);
  const [latest] = await db
    .select({ day: max(forecastSnapshotDays.snapshotOn) })
    .from(forecastSnapshotDays)
    .where(and(eq(forecastSnapshotDays.orgId, orgId), lte(forecastSnapshotDays.snapshotOn, period.startsOn)));
  const snapshotOn = latest?.day ?? null;
  const snapshots = snapshotOn
    ? await db
        .select()
        .from(forecastSnapshots)
        .where(
          and(
            eq(forecastSnapshots.orgId, orgId),
            eq(forecastSnapshots.snapshotOn, snapshotOn),
            gte(forecastSnapshots.closeMonth, period.months[0] ?? ''),
            lte(forecastSnapshots.closeMonth, period.months[period.months.length - 1] ?? ''),
          ),
        )
    : [];
  const won = await sumWonByMonth(
    db,
    orgId,
    new Date(`${period.startsOn}T00:00:00Z`),
    new Date(new Date(`${period.endsOn}T00:00:00Z`).getTime() + 86_400_000),
  );

  // cells[month][currency]
  const cells = new Map<string, Map<string, Cell>>(period.months.map((m) => [m, new Map()]));
  const currencies = new Set<string>();
  const cellOf = (month: string, currency: string): Cell | undefined => {
    const byCurrency = cells.get(month);
    if (!byCurrency) return undefined;
    currencies.add(currency);
    let cell = byCurrency.get(currency);
    if (!cell) {
      cell = { forecast: snapshotOn ? 0n : null, commit: snapshotOn ? 0n : null, actual: 0n };
      byCurrency.set(currency, cell);
    }
    return cell;
  };
  for (const row of snapshots) {
    const cell = cellOf(row.closeMonth, row.currency);
    if (cell) {
      cell.forecast = (cell.forecast ?? 0n) + row.weightedMinor;
      cell.commit = (cell.commit ?? 0n) + row.commitMinor;
    }
  }
  for (const row of won) {
    const cell = cellOf(row.month, row.currency);
    if (cell) cell.actual += parseMinor(row.value, row.currency);
  }

  const sorted = [...currencies].sort();
  const empty = (): Cell => ({
    forecast: snapshotOn ? 0n : null,
    commit: snapshotOn ? 0n : null,
    actual: 0n,
  });
  const monthRows = period.months.map((month) => ({
    month,
    currencies: sorted.map((currency) => figures(currency, cells.get(month)?.get(currency) ?? empty())),
  }));
  const totals = sorted.map((currency) => {
    const total = empty();
    const errors: bigint[] = [];
    for (const month of period.months) {
      const cell = cells.get(month)?.get(currency) ?? empty();
      if (total.forecast !== null && cell.forecast !== null) total.forecast += cell.forecast;
      if (total.commit !== null && cell.commit !== null) total.commit += cell.commit;
      total.actual += cell.actual;
      if (cell.forecast !== null && cell.actual > 0n) {
        const diff = cell.forecast - cell.actual;
        errors.push(divideRounded((diff < 0n ? -diff : diff) * RATIO_SCALE, cell.actual));
      }
    }
    // The mean of the months' errors, each already rounded to 4 decimals, rounded again to 4.
    const mape =
      period.kind === 'month' || errors.length === 0
        ? null
        : Number(
            divideRounded(
              errors.reduce((sum, e) => sum + e, 0n),
              BigInt(errors.length),
            ),
          ) / Number(RATIO_SCALE);
    return { ...figures(currency, total), mape };
  });
  return {
    period: period.period,
    starts_on: period.startsOn,
    ends_on: period.endsOn,
    complete: utcDay(now) > period.endsOn,
    snapshot_on: snapshotOn,
    snapshots_since: snapshotsSince,
    note:
      snapshotOn === null
        ? `No forecast: snapshots of this organization began on ${snapshotsSince}, after this period started on ` +
          `${period.startsOn}. Periods starting on or after ${snapshotsSince} have one.`
        : null,
    currencies: totals,
    months: period.kind === 'month' ? [] : monthRows,
  };
}
