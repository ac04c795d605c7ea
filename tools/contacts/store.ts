// Contacts' data functions: the people at a lead, on the record helper (core/records.ts). Known
// fields are columns (emails and phones are typed jsonb lists); any further property a caller sends
// is an additional property kept in `custom` and returned flattened at the top level, by the same
// rules as leads. A contact lives and dies with its lead: trashing the lead trashes it
// (core/trash.ts ChildTable), and it cannot be restored alone while the lead is in the trash.
import { and, asc, eq, getTableColumns, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { ContactMovingHook } from '../../core/area.ts';
import type { Executor } from '../../core/db/client.ts';
import { validationError } from '../../core/errors.ts';
import {
  auditFields,
  defineRecordTable,
  diffFields,
  emitChange,
  type FieldNames,
  mergeCustom,
  mergePatch,
  newRecordStamp,
  type RecordContext,
  withAdditional,
} from '../../core/records.ts';
import type { TrashType } from '../../core/trash.ts';
import { isLiveLead, restoreLeadChild } from '../leads/children.ts';
import { leadRecords } from '../leads/store.ts';
import { type ContactEmail, type ContactPhone, type ContactRow, contacts } from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Record shape

const emailSchema = z.object({
  email: z.string().describe('Email address'),
  type: z.string().describe('Kind of address, a free label such as work, home or other'),
});
const phoneSchema = z.object({
  phone: z.string().describe('Phone number, normalized to + and digits (E.164)'),
  type: z.string().describe('Kind of number, a free label such as office, mobile, direct or fax'),
});

export const contactSchema = z
  .looseObject({
    _id: z.string().describe('Contact id (24 hex characters)'),
    lead_id: z.string().describe('Id of the lead the contact belongs to'),
    name: z.string().describe("The person's name"),
    title: z.string().nullable().describe('Job title, or null'),
    emails: z.array(emailSchema).describe('Email addresses, each with its type'),
    phones: z.array(phoneSchema).describe('Phone numbers, each with its type'),
    ...auditFields('contact'),
  })
  .describe('A contact: the fields listed plus any additional properties stored with it, at the top level');
export type ContactRecord = z.output<typeof contactSchema>;

/** Every column but the generated search vector, which no caller needs to read back. */
const { search: _search, ...contactColumns } = getTableColumns(contacts);
export type ContactData = Omit<ContactRow, 'search'>;

export function serializeContact(row: ContactData): ContactRecord {
  return withAdditional(
    {
      _id: row.id,
      lead_id: row.leadId,
      name: row.name,
      title: row.title,
      emails: row.emails.map((e) => ({ email: e.email, type: e.type })),
      phones: row.phones.map((p) => ({ phone: p.phone, type: p.type })),
      created_by: row.createdBy,
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    },
    row.custom,
  );
}

/** The contacts table on the record helper: lookups, lists, trash and restore. */
export const contactRecords = defineRecordTable<ContactData>({
  label: 'Contact',
  table: contacts,
  select: (db) => db.select(contactColumns).from(contacts).$dynamic(),
  update: (db, set, where) => db.update(contacts).set(set).where(where).returning(contactColumns),
});

// ---------------------------------------------------------------------------------------------
// Changes

/** The editable state of a contact: what an update merges into. */
interface ContactState {
  leadId: string;
  name: string;
  title: string | null;
  emails: ContactEmail[];
  phones: ContactPhone[];
  custom: Record<string, unknown>;
}

/** The fields a contact.updated event names, in the order it lists them (additional properties follow). */
const CONTACT_FIELDS: FieldNames<keyof ContactState> = [
  ['leadId', 'lead_id'],
  ['name', 'name'],
  ['title', 'title'],
  ['emails', 'emails'],
  ['phones', 'phones'],
];

function stateOf(row: ContactData): ContactState {
  return {
    leadId: row.leadId,
    name: row.name,
    title: row.title,
    emails: row.emails,
    phones: row.phones,
    custom: row.custom,
  };
}

/** The fields a caller sends, by their public names. */
export interface ContactInput {
  lead_id?: string | undefined;
  name?: string | undefined;
  title?: string | null | undefined;
  emails?: ContactEmail[] | undefined;
  phones?: ContactPhone[] | undefined;
}

/** The same number twice in one list is noise: keep the first of each (address compared case-insensitively). */
function dedupeEmails(emails: readonly ContactEmail[]): ContactEmail[] {
  const seen = new Set<string>();
  return emails.filter((e) => {
    const key = e.email.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
function dedupePhones(phones: readonly ContactPhone[]): ContactPhone[] {
  const seen = new Set<string>();
  return phones.filter((p) => {
    if (seen.has(p.phone)) return false;
    seen.add(p.phone);
    return true;
  });
}

export async function insertContact(
  ctx: RecordContext,
  input: ContactInput & { lead_id: string; name: string },
  custom: Record<string, unknown>,
): Promise<ContactRecord> {
  // An unknown, trashed or other-organization lead is a 404 "Lead not found", as for every child record.
  await leadRecords.getLive(ctx.db, ctx.auth.orgId, input.lead_id);
  const rows = await ctx.db
    .insert(contacts)
    .values({
      ...newRecordStamp(ctx),
      leadId: input.lead_id,
      name: input.name,
      title: input.title ?? null,
      emails: dedupeEmails(input.emails ?? []),
      phones: dedupePhones(input.phones ?? []),
      custom,
    })
    .returning(contactColumns);
  return contactRecords.created(ctx, 'contact.created', serializeContact, rows);
}

/** A contact mail can go to: its name and first e-mail address. */
export interface MailableContact {
  id: string;
  name: string;
  email: string;
}

/**
 * Who a document or an email to a lead is addressed to: the given contact when it is live and has
 * an e-mail address, else the lead's oldest live contact that has one (its first address), else
 * null. Invoices, estimates, proposals and workflow emails all pick their recipient this way.
 */
export async function mailableContact(
  db: Executor,
  orgId: string,
  leadId: string,
  contactId?: string | null,
): Promise<MailableContact | null> {
  const live = and(eq(contacts.orgId, orgId), isNull(contacts.deletedAt));
  const columns = { id: contacts.id, name: contacts.name, emails: contacts.emails };
  if (contactId) {
    const [own] = await db
      .select(columns)
      .from(contacts)
      .where(and(live, eq(contacts.id, contactId)));
    const email = own?.emails[0]?.email;
    if (own && email) return { id: own.id, name: own.name, email };
  }
  const [first] = await db
    .select(columns)
    .from(contacts)
    .where(and(live, eq(contacts.leadId, leadId), sql`jsonb_array_length(${contacts.emails}) > 0`))
    .orderBy(asc(contacts.createdAt), asc(contacts.id))
    .limit(1);
  const email = first?.emails[0]?.email;
  return first && email ? { id: first.id, name: first.name, email } : null;
}

/** True when the contact is a live contact of that lead (a reference other records make: a deal's, an activity's). */
export async function isContactOfLead(
  db: Executor,
  orgId: string,
  contactId: string,
  leadId: string,
): Promise<boolean> {
  const [row] = await db
    .select({ id: contacts.id })
    .from(contacts)
    .where(
      and(
        eq(contacts.id, contactId),
        eq(contacts.orgId, orgId),
        eq(contacts.leadId, leadId),
        isNull(contacts.deletedAt),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * Merge semantics: sent fields replace (emails and phones as whole lists), custom keys merge, a
 * custom key sent as null is removed. Moving to another lead needs that lead live and the consent of
 * the areas whose records name the contact (`moving`: no live opportunity of the current lead names
 * it, tools/opportunities).
 */
export async function patchContact(
  ctx: RecordContext,
  id: string,
  input: ContactInput,
  custom: Record<string, unknown>,
  moving: readonly ContactMovingHook[],
): Promise<ContactRecord> {
  const before = await contactRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const next = mergePatch(stateOf(before), {
    leadId: input.lead_id,
    name: input.name,
    title: input.title,
    emails: input.emails && dedupeEmails(input.emails),
    phones: input.phones && dedupePhones(input.phones),
    custom: mergeCustom(before.custom, custom),
  });
  if (next.leadId !== before.leadId) {
    for (const refuseMove of moving) await refuseMove(ctx.db, before);
    // The target lead is a referenced record in the body, not the path's own record: 400, not 404.
    if (!(await isLiveLead(ctx.db, ctx.auth.orgId, next.leadId))) {
      throw validationError([
        {
          field: 'lead_id',
          message: 'must be the id of a live lead of this organization',
          code: 'invalid_lead',
        },
      ]);
    }
  }
  const change = diffFields(before, next, CONTACT_FIELDS, [before.custom, next.custom]);
  if (change.changed.length === 0) return serializeContact(before);
  const row = await contactRecords.write(ctx.db, ctx.auth.orgId, before.id, { ...next, updatedAt: ctx.now });
  return emitChange(ctx, 'contact.updated', serializeContact(row), change);
}

// ---------------------------------------------------------------------------------------------
// Trash

export async function trashContact(ctx: RecordContext, id: string): Promise<void> {
  const row = await contactRecords.trash(ctx, id);
  await ctx.emit('contact.deleted', { ...serializeContact(row), deleted_at: ctx.now.toISOString() });
}

/** Brings a contact deleted on its own back; one that went with its lead comes back with the lead. */
async function restoreContact(ctx: RecordContext, id: string): Promise<ContactRecord> {
  const { row, ...change } = await restoreLeadChild(contactRecords, ctx, id);
  return emitChange(ctx, 'contact.updated', serializeContact(row), change);
}

/** The contact entry of the trash registry (the area's `trashTypes`, collected in tools/index.ts). */
export const contactTrashTypes: readonly TrashType[] = [
  contactRecords.trashType({
    type: 'contact',
    recordKey: 'contact',
    resource: 'contacts',
    schema: contactSchema,
    name: contacts.name,
    restore: restoreContact,
  }),
];
