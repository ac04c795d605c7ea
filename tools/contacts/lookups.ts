// What other areas ask of a lead's contacts without reading the contacts table themselves
// (docs/architecture.md "Boundaries"): the columns a query over the leads (a smart view) may filter
// on, and the correlated EXISTS over a lead's live contacts it compiles them into.
import { and, asc, desc, eq, isNull, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { leadIsLive } from '../leads/lookups.ts';
import { type ContactEmail, type ContactPhone, contacts } from './tables.ts';

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

/** How to reach a live contact of the organization (its e-mails and phones, in order); null when it is not live. */
export async function liveContactAddresses(
  db: Executor,
  orgId: string,
  id: string,
): Promise<{ emails: readonly ContactEmail[]; phones: readonly ContactPhone[] } | null> {
  const [row] = await db
    .select({ emails: contacts.emails, phones: contacts.phones })
    .from(contacts)
    .where(and(eq(contacts.id, id), eq(contacts.orgId, orgId), isNull(contacts.deletedAt)))
    .limit(1);
  return row ?? null;
}

/** A contact as a picker of one of a lead's contacts needs it. */
export interface LeadContactChoice {
  id: string;
  name: string;
  emails: ContactEmail[];
}

/** The live contacts of a lead, oldest first; only the one with `contactId` when given. */
export async function liveContactsOfLead(
  db: Executor,
  orgId: string,
  leadId: string,
  contactId?: string,
): Promise<LeadContactChoice[]> {
  const live = and(eq(contacts.orgId, orgId), eq(contacts.leadId, leadId), isNull(contacts.deletedAt));
  const query = db
    .select({ id: contacts.id, name: contacts.name, emails: contacts.emails })
    .from(contacts)
    .where(contactId === undefined ? live : and(live, eq(contacts.id, contactId)));
  return contactId === undefined ? query.orderBy(asc(contacts.createdAt), asc(contacts.id)) : query.limit(1);
}

/**
 * `exists (the contact contactId of the organization, trashed ones too, has the address)`, any of
 * its e-mails, compared lower-case (`address` is lower-case).
 */
export function contactHasAddress(orgId: string, contactId: SQLWrapper, address: string): SQL {
  return sql`exists (
    select 1 from ${contacts}
    where ${contacts.id} = ${contactId}
      and ${contacts.orgId} = ${orgId}
      and exists (
        select 1 from jsonb_array_elements(${contacts.emails}) as e
        where lower(e->>'email') = ${address}
      )
  )`;
}

/** The live contact (of a live lead) with this address, the most recently updated when several. */
export async function liveContactWithAddress(
  db: Executor,
  orgId: string,
  address: string,
): Promise<{ contactId: string; leadId: string } | null> {
  const [row] = await db
    .select({ contactId: contacts.id, leadId: contacts.leadId })
    .from(contacts)
    .where(
      and(
        eq(contacts.orgId, orgId),
        isNull(contacts.deletedAt),
        leadIsLive(contacts.leadId),
        sql`exists (select 1 from jsonb_array_elements(${contacts.emails}) as e where lower(e->>'email') = ${address.toLowerCase()})`,
      ),
    )
    .orderBy(desc(contacts.updatedAt), desc(contacts.id))
    .limit(1);
  return row ?? null;
}

/**
 * The live contact (of a live lead) with this phone number, the most recently updated when several
 * (tools/messages files an inbound text message on its lead). Numbers compare by their digits, so a
 * stored "+1 (415) 555-0100" matches the E.164 `+14155550100`.
 */
export async function liveContactWithPhone(
  db: Executor,
  orgId: string,
  e164: string,
): Promise<{ contactId: string; leadId: string } | null> {
  const digits = e164.replace(/\D/g, '');
  if (digits === '') return null;
  const [row] = await db
    .select({ contactId: contacts.id, leadId: contacts.leadId })
    .from(contacts)
    .where(
      and(
        eq(contacts.orgId, orgId),
        isNull(contacts.deletedAt),
        leadIsLive(contacts.leadId),
        sql`exists (select 1 from jsonb_array_elements(${contacts.phones}) as p where regexp_replace(p->>'phone', '[^0-9]', '', 'g') = ${digits})`,
      ),
    )
    .orderBy(desc(contacts.updatedAt), desc(contacts.id))
    .limit(1);
  return row ?? null;
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
