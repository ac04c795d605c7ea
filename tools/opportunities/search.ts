// The opportunity branch of the global search (search_crm): one UNION ALL branch over the live opportunities.
import { type SQL, sql } from 'drizzle-orm';
import type { SearchSource } from '../../core/area.ts';
import { rankOf, type SearchTerms } from '../../core/text-search.ts';
import { joinLiveLead } from '../leads/lookups.ts';
import { opportunities } from './tables.ts';

function opportunityBranch(t: SearchTerms): SQL {
  const name = sql`coalesce(nullif(o.note, ''), o.currency || ' ' || o.value::text || ' opportunity on ' || l.name)`;
  return sql`select 'opportunity'::text as type, o.id as id, ${name} as name, o.lead_id as lead_id, l.name as lead_name,
    concat_ws(' · ', o.status, nullif(o.pipeline_stage, ''), o.currency || ' ' || o.value::text) as snippet,
    ${rankOf(sql`o.search`, name, t)} as rank
    from ${opportunities} o ${joinLiveLead('o', 'l')}
    where o.org_id = ${t.orgId} and o.deleted_at is null and o.search @@ to_tsquery('simple', ${t.prefix})`;
}

export const opportunitySearchSource: SearchSource = {
  type: 'opportunity',
  resource: 'opportunities',
  permission: 'opportunities.view',
  branch: opportunityBranch,
};
