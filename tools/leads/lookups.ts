// What other areas ask of leads without reading the leads table themselves (docs/architecture.md
// "Boundaries"): which ids are live leads, the live lead of a row in a search branch, and the
// columns and reads a query over the leads (a smart view) compiles against.
import {
  and,
  count,
  eq,
  getTableColumns,
  inArray,
  isNull,
  type SQL,
  type SQLWrapper,
  sql,
} from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { rowsOf } from '../../core/db/sql.ts';
import type { LeadData } from './store.ts';
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

/**
 * The lead columns a query over the leads may filter and sort on (tools/smart-views compiles its
 * filters against these), by catalogue field; `id` and `custom` for correlation and custom fields.
 */
export const LEAD_QUERY_COLUMNS = {
  id: leads.id,
  name: leads.name,
  description: leads.description,
  url: leads.url,
  status: leads.status,
  owner_id: leads.ownerId,
  tags: leads.tags,
  custom: leads.custom,
  created_at: leads.createdAt,
  updated_at: leads.updatedAt,
  converted_at: leads.convertedAt,
} as const;

/** Every column but the generated search vector, which no caller reads back. */
const { search: _search, ...readColumns } = getTableColumns(leads);

/** The live leads of the organization matching `condition` (over LEAD_QUERY_COLUMNS). */
export async function countLiveLeadsWhere(db: Executor, orgId: string, condition: SQL): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(leads)
    .where(and(eq(leads.orgId, orgId), isNull(leads.deletedAt), condition));
  return row?.n ?? 0;
}

/** One page of the live leads matching `condition`, in `order` (a smart view's page). */
export function readLiveLeadsWhere(
  db: Executor,
  orgId: string,
  condition: SQL,
  order: SQL[],
  page: { limit: number; offset: number },
): Promise<LeadData[]> {
  return db
    .select(readColumns)
    .from(leads)
    .where(and(eq(leads.orgId, orgId), isNull(leads.deletedAt), condition))
    .orderBy(...order)
    .limit(page.limit)
    .offset(page.offset);
}

/**
 * The ids of one page of the live leads matching `condition`, in `order`, with how many match in
 * all (`count(*) over ()`, computed before the limit): one pass over the matches where a count and
 * a page would make two. Meant for conditions that start from few leads (a smart view narrowed by
 * its facts to ids): the window keeps every match's id and sort key until the page is cut. An
 * empty page carries no count: `total` is then null.
 *
 * The matches are read in a subquery kept apart (`offset 0`), named `leads` so `order` still
 * names its columns. Without it, when `condition` is transparent to the planner (ids and a status),
 * it walks the order's index to stop at the page, as if the limit applied, though the window
 * must see every match first: 1M leads were read for 3,881 ids (477 ms instead of 20).
 */
export async function pageLiveLeadIdsWhere(
  db: Executor,
  orgId: string,
  condition: SQL,
  order: SQL[],
  page: { limit: number; offset: number },
): Promise<{ ids: string[]; total: number | null }> {
  const rows = await db.execute(sql`
    select ${leads.id} as id, count(*) over () as total
    from (select * from ${leads}
          where ${leads.orgId} = ${orgId}::text and ${leads.deletedAt} is null and ${condition}
          offset 0) as ${leads}
    order by ${sql.join(order, sql`, `)}
    limit ${page.limit} offset ${page.offset}`);
  const parsed = pageRowsSchema.parse(rowsOf(rows));
  return { ids: parsed.map((r) => r.id), total: parsed[0]?.total ?? null };
}

const pageRowsSchema = z.array(z.object({ id: z.string(), total: z.coerce.number().int() }));

/** Whether `id` is a live (not trashed) lead of the organization. */
export async function isLiveLead(db: Executor, orgId: string, id: string): Promise<boolean> {
  const [row] = await db
    .select({ id: leads.id })
    .from(leads)
    .where(and(eq(leads.id, id), eq(leads.orgId, orgId), isNull(leads.deletedAt)))
    .limit(1);
  return row !== undefined;
}

/** `exists (the live lead whose id is leadId)`, for a query over another area's rows. */
export function leadIsLive(leadId: SQLWrapper): SQL {
  return sql`exists (select 1 from ${leads} where ${leads.id} = ${leadId} and ${leads.deletedAt} is null)`;
}
