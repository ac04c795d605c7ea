// The opportunity branch of the global search (search_crm): one UNION ALL branch over the live opportunities.
import { type SQL, sql } from 'drizzle-orm';
import type { SearchSource } from '../../core/area.ts';
import {
  type GlobalSearchTerms,
  rankedWordMatches,
  rankOf,
  type SearchWord,
} from '../../core/text-search.ts';
import { joinLiveLead } from '../leads/lookups.ts';
import { opportunities } from './tables.ts';

const name = sql`coalesce(nullif(o.note, ''), o.currency || ' ' || o.value::text || ' opportunity on ' || l.name)`;
const columns = sql`'opportunity'::text as type, o.id as id, ${name} as name, o.lead_id as lead_id, l.name as lead_name,
    concat_ws(' · ', o.status, nullif(o.pipeline_stage, ''), o.currency || ' ' || o.value::text) as snippet`;

function opportunityBranch(t: GlobalSearchTerms): SQL {
  if (t.word !== null) return rankedOpportunities(t, t.word);
  return sql`select ${columns}, ${rankOf(sql`o.search`, name, t)} as rank
    from ${opportunities} o ${joinLiveLead('o', 'l')}
    where o.org_id = ${t.orgId} and o.deleted_at is null and o.search @@ to_tsquery('simple', ${t.prefix})`;
}

/**
 * A one-word search: the live opportunities ranked from opportunity_search_terms, read best first
 * until `limit` of them have a live lead. The +1 of an exact name comes from the note: without one,
 * the name "<currency> <value> opportunity on <lead>" has spaces, and a one-word phrase none.
 */
function rankedOpportunities(t: GlobalSearchTerms, word: SearchWord): SQL {
  const ranked = rankedWordMatches('opportunity_search_terms', 'opportunity_id', t, word);
  // Ordered best first behind a fence (offset 0), so the plan reads opportunities and leads for the
  // best few only; flattened, the planner joined every match by scanning all opportunities (300 ms
  // at 300,000 against 23 ms).
  return sql`select ${columns}, ranked.rank as rank
    from (select * from (${ranked}) matches order by rank desc, id desc offset 0) ranked
    join ${opportunities} o on o.id = ranked.id and o.org_id = ${t.orgId} and o.deleted_at is null
    ${joinLiveLead('o', 'l')}
    order by ranked.rank desc, ranked.id desc limit ${t.limit}`;
}

export const opportunitySearchSource: SearchSource = {
  type: 'opportunity',
  resource: 'opportunities',
  permission: 'opportunities.view',
  branch: opportunityBranch,
};
