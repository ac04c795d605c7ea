// What other areas ask of a lead's contacts without reading the contacts table themselves
// (docs/architecture.md "Boundaries"): the columns a query over the leads (a smart view) may filter
// on, and the correlated EXISTS over a lead's live contacts it compiles them into.
import { type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import { contacts } from './tables.ts';

/** Filterable contact columns by catalogue field (`email`, `phone`: the jsonb lists of objects). */
export const CONTACT_QUERY_COLUMNS = {
  name: contacts.name,
  title: contacts.title,
  email: contacts.emails,
  phone: contacts.phones,
} as const;

/**
 * `exists (a live contact of the lead `leadId` matching `predicate`)`, correlated on (org_id,
 * lead_id) so the contacts' (org_id, lead_id) index serves it.
 */
export function existsLiveContactOfLead(orgId: string, leadId: SQLWrapper, predicate: SQL): SQL {
  return sql`exists (select 1 from ${contacts} where ${contacts.orgId} = ${orgId}::text and ${contacts.leadId} = ${leadId} and ${contacts.deletedAt} is null and ${predicate})`;
}
