// The lead branch of the global search (search_crm): one UNION ALL branch over the live leads.
import { type SQL, sql } from 'drizzle-orm';
import type { SearchSource } from '../../core/area.ts';
import { rankOf, type SearchTerms } from '../../core/text-search.ts';
import { leads } from './tables.ts';

function leadBranch(t: SearchTerms): SQL {
  return sql`select 'lead'::text as type, ${leads.id} as id, ${leads.name} as name, null::text as lead_id,
    ${leads.name} as lead_name,
    coalesce(nullif(${leads.description}, ''), ${leads.url}, ${leads.status}) as snippet,
    ${rankOf(sql`${leads.search}`, sql`${leads.name}`, t)} as rank
    from ${leads}
    where ${leads.orgId} = ${t.orgId} and ${leads.deletedAt} is null
      and ${leads.search} @@ to_tsquery('simple', ${t.prefix})`;
}

export const leadSearchSource: SearchSource = {
  type: 'lead',
  resource: 'leads',
  permission: 'leads.view',
  branch: leadBranch,
};
