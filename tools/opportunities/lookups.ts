// What other areas ask of a lead's opportunities without reading the opportunities table themselves
// (docs/architecture.md "Boundaries").
import { and, count, eq, gte, isNull, lt, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { opportunities } from './tables.ts';

/** How many live active opportunities a lead has and their total value (tools/lead-health). */
export async function summarizeOpenOpportunities(
  db: Executor,
  orgId: string,
  leadId: string,
): Promise<{ count: number; value: number }> {
  const [row] = await db
    .select({
      n: count(),
      total: sql<unknown>`coalesce(sum(${opportunities.value}), 0)`,
    })
    .from(opportunities)
    .where(
      and(
        eq(opportunities.orgId, orgId),
        eq(opportunities.leadId, leadId),
        isNull(opportunities.deletedAt),
        eq(opportunities.status, 'active'),
      ),
    );
  return { count: row?.n ?? 0, value: Number(row?.total ?? 0) };
}

/** Filterable opportunity columns by catalogue field, for a query over the leads (a smart view). */
export const OPPORTUNITY_QUERY_COLUMNS = {
  status: opportunities.status,
  value: opportunities.value,
  confidence: opportunities.confidence,
  currency: opportunities.currency,
  pipeline_stage: opportunities.pipelineStage,
  expected_close_date: opportunities.expectedCloseDate,
  owner_id: opportunities.ownerId,
  note: opportunities.note,
} as const;

/** `exists (a live opportunity of the lead `leadId` matching `predicate`)`, correlated on (org_id, lead_id). */
export function existsLiveOpportunityOfLead(orgId: string, leadId: SQLWrapper, predicate: SQL): SQL {
  return sql`exists (select 1 from ${opportunities} where ${opportunities.orgId} = ${orgId}::text and ${opportunities.leadId} = ${leadId} and ${opportunities.deletedAt} is null and ${predicate})`;
}

/** One organization's open pipeline in one currency and month of expected close (tools/forecast). */
export interface PipelineSum {
  orgId: string;
  currency: string;
  /** `YYYY-MM` of the expected close date. */
  closeMonth: string;
  /** Sum of value x confidence, as numeric text (value in major units times a percentage). */
  weighted: string;
  /** Sum of the values whose confidence is at least the commit threshold, as numeric text. */
  commit: string;
}

/**
 * The active, live opportunities with an expected close date, summed per organization, currency
 * and month of close; of every organization, or of `orgId` only.
 */
export async function sumOpenPipeline(
  db: Executor,
  commitConfidence: number,
  orgId?: string,
): Promise<PipelineSum[]> {
  const closeMonth = sql<string>`to_char(${opportunities.expectedCloseDate}, 'YYYY-MM')`;
  return db
    .select({
      orgId: opportunities.orgId,
      currency: opportunities.currency,
      closeMonth,
      weighted: sql<string>`sum(${opportunities.value} * ${opportunities.confidence})::text`,
      commit: sql<string>`coalesce(sum(${opportunities.value}) filter (where ${opportunities.confidence} >= ${commitConfidence}), 0)::text`,
    })
    .from(opportunities)
    .where(
      and(
        isNull(opportunities.deletedAt),
        eq(opportunities.status, 'active'),
        sql`${opportunities.expectedCloseDate} is not null`,
        orgId ? eq(opportunities.orgId, orgId) : undefined,
      ),
    )
    .groupBy(opportunities.orgId, opportunities.currency, closeMonth);
}

/** The live won opportunities closed in [from, before), summed per currency and UTC month of closing. */
export async function sumWonByMonth(
  db: Executor,
  orgId: string,
  from: Date,
  before: Date,
): Promise<{ currency: string; month: string; value: string }[]> {
  const wonMonth = sql<string>`to_char(${opportunities.closedAt} at time zone 'UTC', 'YYYY-MM')`;
  return db
    .select({
      currency: opportunities.currency,
      month: wonMonth,
      value: sql<string>`sum(${opportunities.value})::text`,
    })
    .from(opportunities)
    .where(
      and(
        eq(opportunities.orgId, orgId),
        isNull(opportunities.deletedAt),
        eq(opportunities.status, 'won'),
        gte(opportunities.closedAt, from),
        lt(opportunities.closedAt, before),
      ),
    )
    .groupBy(opportunities.currency, wonMonth);
}

/**
 * What a deal says about the sale (its note, value, status and expected close), trashed or not, or
 * null when the organization has no such deal (tools/proposals asks its discovery questions with it).
 */
export async function saleFactsOfOpportunity(
  db: Executor,
  orgId: string,
  id: string,
): Promise<{
  note: string | null;
  value: number;
  currency: string;
  status: string;
  expectedCloseDate: string | null;
} | null> {
  const [deal] = await db
    .select({
      note: opportunities.note,
      value: opportunities.value,
      currency: opportunities.currency,
      status: opportunities.status,
      expectedCloseDate: opportunities.expectedCloseDate,
    })
    .from(opportunities)
    .where(and(eq(opportunities.id, id), eq(opportunities.orgId, orgId)))
    .limit(1);
  return deal ?? null;
}
