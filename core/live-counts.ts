// Exact live counts without a hot row. A counted table (leads; invoices by status) has triggers that
// append one delta per (organization, key) each statement changes to the `live_counts` ledger, in
// the writer's own transaction (migration 0031, `live_counts_attach`). Writers only ever insert, so
// concurrent creators in one organization never queue behind a shared counter row, and a rollback
// takes its deltas with it. A count is the sum of the organization's rows; the fold job keeps those
// few by collapsing each organization's rows into one per (kind, key).
// docs/decisions.md "Exact counts without a hot row".
import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from './db/client.ts';
import { liveCounts } from './db/schema.ts';
import { rowsOf } from './db/sql.ts';
import { defineSchedule, singleAttemptJob } from './jobs.ts';

/**
 * The organization's live rows of `kind` (its table's triggers name it): all of them, or only those
 * whose bucket column holds one of `keys` (an invoice list filtered by status).
 */
export async function readLiveCount(
  db: Executor,
  orgId: string,
  kind: string,
  keys?: readonly string[],
): Promise<number> {
  const [row] = rowsOf(await db.execute(sql`select (${liveCountSql(orgId, kind, keys)}) as n`));
  const n = typeof row === 'object' && row !== null && 'n' in row ? row.n : null;
  return Number(n ?? 0);
}

/**
 * The same count as a scalar SQL expression, for a list to read in its page's own statement
 * (core/records.ts listPage `total`).
 */
export function liveCountSql(orgId: string, kind: string, keys?: readonly string[]): SQL<number> {
  const where = and(
    eq(liveCounts.orgId, orgId),
    eq(liveCounts.kind, kind),
    keys ? inArray(liveCounts.key, [...keys]) : undefined,
  );
  return sql<number>`select coalesce(sum(${liveCounts.delta}), 0)::bigint from ${liveCounts} where ${where}`;
}

const foldCandidates = z.array(z.object({ org_id: z.string() }));
const foldedRows = z.array(z.object({ n: z.union([z.string(), z.number()]) }));

/**
 * Collapses each organization's ledger rows into one per (kind, key), or none when they sum to zero;
 * returns how many rows were folded away. Each organization is one statement, so one transaction:
 * it deletes the rows its snapshot sees and inserts their sum from what the DELETE returned. A delta
 * committed meanwhile (or still uncommitted) is not in that snapshot, so it stays as it is, and a
 * fold running at the same time deletes and sums only rows this one did not: nothing is lost or
 * counted twice. Writers are never blocked (they only insert). Runs outside row-level security.
 */
export async function foldLiveCounts(db: Executor, orgId?: string): Promise<number> {
  const candidates = orgId
    ? [{ org_id: orgId }]
    : foldCandidates.parse(
        rowsOf(
          await db.execute(sql`
            select distinct org_id from (
              select org_id from live_counts group by org_id, kind, key having count(*) > 1
            ) crowded`),
        ),
      );
  let folded = 0;
  for (const { org_id } of candidates) {
    const [row] = foldedRows.parse(
      rowsOf(
        await db.execute(sql`
          with taken as (
            delete from live_counts where org_id = ${org_id} returning kind, key, delta
          ), summed as (
            insert into live_counts (org_id, kind, key, delta)
            select ${org_id}, kind, key, sum(delta) from taken group by kind, key having sum(delta) <> 0
            returning 1
          )
          select (select count(*) from taken) - (select count(*) from summed) as n`),
      ),
    );
    folded += Number(row?.n ?? 0);
  }
  return folded;
}

const foldPayload = z.object({
  orgId: z
    .string()
    .optional()
    .describe('Only this organization (every organization with rows to fold when absent)'),
});

declare module './jobs.ts' {
  interface JobCatalog {
    /** Collapse the live-count ledger: one row per organization, kind and key. */
    'live-counts.fold': z.output<typeof foldPayload>;
  }
}

/**
 * How often the ledger is folded. A count reads the rows written since the last fold, so the
 * interval bounds them by the organization's insert rate: 24,000 unfolded rows (20 s of a burst of
 * 1,200 lead inserts a second, what `npm run bench` creates) cost 2.7 ms per count in psql against
 * 0.05 folded, and every list of that organization pays it. Every 5 seconds the same burst leaves at
 * most 6,000 rows; a run with nothing to fold is one scan of the folded ledger (a few rows per
 * organization). docs/decisions.md "Exact counts without a hot row".
 */
const LIVE_COUNTS_FOLD_EVERY_MS = 5_000;

/** The fold, not retried: the next run folds whatever this one left. */
export const liveCountsFold = {
  job: singleAttemptJob({
    name: 'live-counts.fold',
    payload: foldPayload,
    async run(services, { orgId }) {
      const folded = await foldLiveCounts(services.db.system, orgId);
      if (folded > 0) services.logger.debug({ folded }, 'live-count ledger folded');
    },
  }),
  schedule: defineSchedule({
    job: 'live-counts.fold',
    payload: () => ({}),
    repeat: () => ({ everyMs: LIVE_COUNTS_FOLD_EVERY_MS }),
  }),
};
