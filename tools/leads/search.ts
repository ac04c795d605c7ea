// The lead branch of the global search (search_crm): one UNION ALL branch over the live leads.
import { type SQL, sql } from 'drizzle-orm';
import type { SearchSource } from '../../core/area.ts';
import {
  type GlobalSearchTerms,
  rankedWordMatches,
  rankOf,
  type SearchWord,
} from '../../core/text-search.ts';
import { leads } from './tables.ts';

const snippet = sql`coalesce(nullif(${leads.description}, ''), ${leads.url}, ${leads.status})`;

function leadBranch(t: GlobalSearchTerms): SQL {
  if (t.word !== null) return rankedLeads(t, t.word);
  return sql`select 'lead'::text as type, ${leads.id} as id, ${leads.name} as name, null::text as lead_id,
    ${leads.name} as lead_name, ${snippet} as snippet,
    ${rankOf(sql`${leads.search}`, sql`${leads.name}`, t)} as rank
    from ${leads}
    where ${leads.orgId} = ${t.orgId} and ${leads.deletedAt} is null
      and ${leads.search} @@ to_tsquery('simple', ${t.prefix})`;
}

/**
 * A one-word search: the best `limit` leads ranked from lead_search_terms (its rows are the live
 * leads' words), then only those read from the leads. Ranking every match from its vector read
 * 17,700 heap pages for "harbor" over 1M leads; this reads one index range and `limit` leads.
 */
function rankedLeads(t: GlobalSearchTerms, word: SearchWord): SQL {
  const ranked = rankedWordMatches('lead_search_terms', 'lead_id', t, word);
  return sql`select 'lead'::text as type, ${leads.id} as id, ${leads.name} as name, null::text as lead_id,
    ${leads.name} as lead_name, ${snippet} as snippet, best.rank as rank
    from (select * from (${ranked}) ranked order by rank desc, id desc limit ${t.limit}) best
    join ${leads} on ${leads.id} = best.id and ${leads.orgId} = ${t.orgId} and ${leads.deletedAt} is null`;
}

export const leadSearchSource: SearchSource = {
  type: 'lead',
  resource: 'leads',
  permission: 'leads.view',
  branch: leadBranch,
};
