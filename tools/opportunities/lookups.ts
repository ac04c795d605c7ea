// What other areas ask of a lead's opportunities without reading the opportunities table themselves
// (docs/architecture.md "Boundaries").
import { and, count, eq, isNull, sql } from 'drizzle-orm';
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
