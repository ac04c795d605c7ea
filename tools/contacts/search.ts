// The contact branch of the global search (search_crm): one UNION ALL branch over the live contacts.
import { type SQL, sql } from 'drizzle-orm';
import type { SearchSource } from '../../core/area.ts';
import { rankOf, type SearchTerms } from '../../core/text-search.ts';
import { joinLiveLead } from '../leads/lookups.ts';
import { contacts } from './tables.ts';

function contactBranch(t: SearchTerms): SQL {
  return sql`select 'contact'::text as type, c.id as id, c.name as name, c.lead_id as lead_id, l.name as lead_name,
    concat_ws(' · ', nullif(c.title, ''), c.emails->0->>'email', c.phones->0->>'phone') as snippet,
    ${rankOf(sql`c.search`, sql`c.name`, t)} as rank
    from ${contacts} c ${joinLiveLead('c', 'l')}
    where c.org_id = ${t.orgId} and c.deleted_at is null and c.search @@ to_tsquery('simple', ${t.prefix})`;
}

export const contactSearchSource: SearchSource = {
  type: 'contact',
  resource: 'contacts',
  permission: 'contacts.view',
  branch: contactBranch,
};
