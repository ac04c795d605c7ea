// The contact branch of the global search (search_crm): one UNION ALL branch over the live contacts.
import { type SQL, sql } from 'drizzle-orm';
import type { SearchSource } from '../../core/area.ts';
import {
  type GlobalSearchTerms,
  rankedWordMatches,
  rankOf,
  type SearchWord,
} from '../../core/text-search.ts';
import { joinLiveLead } from '../leads/lookups.ts';
import { contacts } from './tables.ts';

const columns = sql`'contact'::text as type, c.id as id, c.name as name, c.lead_id as lead_id, l.name as lead_name,
    concat_ws(' · ', nullif(c.title, ''), c.emails->0->>'email', c.phones->0->>'phone') as snippet`;

function contactBranch(t: GlobalSearchTerms): SQL {
  if (t.word !== null) return rankedContacts(t, t.word);
  return sql`select ${columns}, ${rankOf(sql`c.search`, sql`c.name`, t)} as rank
    from ${contacts} c ${joinLiveLead('c', 'l')}
    where c.org_id = ${t.orgId} and c.deleted_at is null and c.search @@ to_tsquery('simple', ${t.prefix})`;
}

/**
 * A one-word search: the live contacts ranked from contact_search_terms, read best first (behind the
 * offset 0 fence, as opportunities) until `limit` of them have a live lead.
 */
function rankedContacts(t: GlobalSearchTerms, word: SearchWord): SQL {
  const ranked = rankedWordMatches('contact_search_terms', 'contact_id', t, word);
  return sql`select ${columns}, ranked.rank as rank
    from (select * from (${ranked}) matches order by rank desc, id desc offset 0) ranked
    join ${contacts} c on c.id = ranked.id and c.org_id = ${t.orgId} and c.deleted_at is null
    ${joinLiveLead('c', 'l')}
    order by ranked.rank desc, ranked.id desc limit ${t.limit}`;
}

export const contactSearchSource: SearchSource = {
  type: 'contact',
  resource: 'contacts',
  permission: 'contacts.view',
  branch: contactBranch,
};
