// What other areas ask of leads without reading the leads table themselves (docs/architecture.md
// "Boundaries"): which ids are live leads, the live lead of a row in a search branch.
import { and, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { leads } from './tables.ts';

/** Of `ids`, the ones that are live (not trashed) leads of the organization. */
export async function liveLeadIds(db: Executor, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: leads.id })
    .from(leads)
    .where(and(eq(leads.orgId, orgId), inArray(leads.id, [...new Set(ids)]), isNull(leads.deletedAt)));
  return new Set(rows.map((r) => r.id));
}

/**
 * `join leads <lead> on <lead>.id = <child>.lead_id and <lead>.org_id = <child>.org_id and
 * <lead>.deleted_at is null`: the live lead of a row aliased `child` in a raw query (a search branch),
 * whose `name` the query may select as `<lead>.name`. An inner join, so rows of a trashed lead drop out.
 */
export function joinLiveLead(child: string, lead: string): SQL {
  const c = sql.identifier(child);
  const l = sql.identifier(lead);
  return sql`join ${leads} ${l} on ${l}.id = ${c}.lead_id and ${l}.org_id = ${c}.org_id and ${l}.deleted_at is null`;
}
