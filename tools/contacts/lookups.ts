// What other areas ask of a lead's contacts without reading the contacts table themselves
// (docs/architecture.md "Boundaries"): the columns a query over the leads (a smart view) may filter
// on, and the correlated EXISTS over a lead's live contacts it compiles them into.
import { and, asc, eq, isNull, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
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

/**
 * The names and titles of a lead's live contacts, oldest first, at most `limit` (tools/proposals
 * asks its discovery questions with them).
 */
export async function namesOfLiveContactsOfLead(
  db: Executor,
  orgId: string,
  leadId: string,
  limit: number,
): Promise<{ name: string; title: string | null }[]> {
  return db
    .select({ name: contacts.name, title: contacts.title })
    .from(contacts)
    .where(and(eq(contacts.orgId, orgId), eq(contacts.leadId, leadId), isNull(contacts.deletedAt)))
    .orderBy(asc(contacts.createdAt), asc(contacts.id))
    .limit(limit);
}
