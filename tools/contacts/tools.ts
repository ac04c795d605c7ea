// Contacts: the people at a lead. Known fields are columns (emails and phones are typed jsonb
// lists); any further property a caller sends is an additional property kept in `custom` and
// returned flattened at the top level, by the same rules as leads. A contact lives and dies with its
// lead: trashing the lead trashes it (core/trash.ts ChildTable), and it cannot be restored alone while
// the lead is in the trash.
import { and, asc, count, desc, eq, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { AppError, notFound, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import {
  iso,
  listParams,
  messageOutput,
  objectId,
  offsetOf,
  paged,
  pagedOutput,
} from '../../core/schemas.ts';
import {
  additionalPropertiesOf,
  NO_NUL,
  nulMessage,
  withAdditionalProperties,
} from '../../core/text-rules.ts';
import { defineTool, type Tool, type ToolContext } from '../../core/tool.ts';
import type { TrashType } from '../../core/trash.ts';
import { assertLeadLive, isLiveLead } from '../leads/children.ts';
import { getLiveLead } from '../leads/tools.ts';
import { opportunities } from '../opportunities/tables.ts';
import { type ContactEmail, type ContactPhone, type ContactRow, contacts } from './tables.ts';

// Type labels stay open, as in other CRMs: integrations send office, mobile, direct, fax and their own
// words, and refusing an unknown one would lose the address with it. These are only the defaults.
const DEFAULT_EMAIL_TYPE = 'work';
const DEFAULT_PHONE_TYPE = 'office';
const typeLabel = (what: string) =>
  z
    .string()
    .trim()
    .min(1)
    .max(50)
    .refine(NO_NUL, nulMessage)
    .describe(`Kind of ${what}: any label of 1-50 characters`);
const MAX_EMAILS = 20;
const MAX_PHONES = 20;

/**
 * Names an additional property may not take: fields the server sets, and keys event payloads add
 * beside the flattened record. Same list as leads (tools/leads/tools.ts RESERVED_LEAD_KEYS) minus the
 * lead-only `converted_at`/`previous_status`, which are harmless on a contact.
 */
const RESERVED_CONTACT_KEYS: ReadonlySet<string> = new Set([
  '_id',
  'id',
  'org_id',
  'created_at',
  'updated_at',
  'deleted_at',
  'deleted_by',
  'created_by',
  'search',
  'custom',
  'changed_fields',
  'previous_values',
]);

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
    created_by: z.string().nullable().describe('Id of the user who created the contact'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('A contact: the fields listed plus any additional properties stored with it, at the top level');
export type ContactRecord = z.output<typeof contactSchema>;

/** Every column but the generated search vector, which no caller needs to read back. */
const contactColumns = {
  id: contacts.id,
  orgId: contacts.orgId,
  leadId: contacts.leadId,
  name: contacts.name,
  title: contacts.title,
  emails: contacts.emails,
  phones: contacts.phones,
  custom: contacts.custom,
  createdBy: contacts.createdBy,
  deletedAt: contacts.deletedAt,
  deletedBy: contacts.deletedBy,
  createdAt: contacts.createdAt,
  updatedAt: contacts.updatedAt,
};
export type ContactData = Omit<ContactRow, 'search'>;

export function serializeContact(row: ContactData): ContactRecord {
  // Custom keys first: reserved names keep them from shadowing a field, and this order makes sure.
  return {
    ...row.custom,
    _id: row.id,
    lead_id: row.leadId,
    name: row.name,
    title: row.title,
    emails: row.emails.map((e) => ({ email: e.email, type: e.type })),
    phones: row.phones.map((p) => ({ phone: p.phone, type: p.type })),
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Input fields

const leadIdField = objectId('lead').describe(
  'Id of the live lead of this organization the contact belongs to (24 hex characters)',
);
const nameField = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .refine(NO_NUL, nulMessage)
  .describe("The person's full name (1-500 characters)");
const titleField = z
  .string()
  .trim()
  .max(200)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('Job title, at most 200 characters; null clears it');
const emailInput = z.strictObject({
  email: z
    .email({ message: 'must be a valid email address' })
    .max(320)
    .describe('Email address, e.g. jane@acme.example'),
  type: typeLabel('address, e.g. work (the default), home, personal or other').default(DEFAULT_EMAIL_TYPE),
});
// Spaces, dashes, dots and brackets are formatting; what is stored is + and the digits (E.164).
const phoneInput = z.strictObject({
  phone: z
    .string()
    .max(50)
    .overwrite((s) => s.replace(/[\s\-.()]/g, ''))
    .regex(
      /^\+\d{7,15}$/,
      'must be an international number: + then 7 to 15 digits (spaces and dashes allowed)',
    )
    .describe(
      'Phone number in international form, e.g. +1 415-555-0100; stored as + and digits (+14155550100)',
    ),
  type: typeLabel('number, e.g. office (the default), mobile, direct, home or fax').default(
    DEFAULT_PHONE_TYPE,
  ),
});
const emailsField = z
  .array(emailInput)
  .max(MAX_EMAILS)
  .describe(`Email addresses, at most ${MAX_EMAILS}; replaces the whole list when sent`);
const phonesField = z
  .array(phoneInput)
  .max(MAX_PHONES)
  .describe(`Phone numbers, at most ${MAX_PHONES}; replaces the whole list when sent`);

const contactIdShape = { id: objectId('contact') };
const createShape = {
  lead_id: leadIdField,
  name: nameField,
  title: titleField.optional(),
  emails: emailsField.optional(),
  phones: phonesField.optional(),
};
const updateShape = {
  ...contactIdShape,
  lead_id: leadIdField
    .optional()
    .describe('Moves the contact to this live lead of the organization (24 hex characters)'),
  name: nameField.optional(),
  title: titleField.optional(),
  emails: emailsField.optional(),
  phones: phonesField.optional(),
};
const CREATE_KEYS: ReadonlySet<string> = new Set(Object.keys(createShape));
const UPDATE_KEYS: ReadonlySet<string> = new Set(Object.keys(updateShape));

function withContactProperties<S extends z.core.$ZodLooseShape>(shape: S) {
  return withAdditionalProperties(shape, { reserved: RESERVED_CONTACT_KEYS, record: 'contact' });
}

const createContactInput = withContactProperties(createShape).describe(
  'The contact; any property beyond the listed fields is kept as an additional property',
);
const updateContactInput = withContactProperties(updateShape).describe(
  'The contact id and the fields to change; additional properties merge, null removes one',
);

// ---------------------------------------------------------------------------------------------
// Data functions

type ContactCtx = Pick<ToolContext, 'db' | 'auth' | 'emit' | 'now'>;

/** Live (not trashed) contact of the organization, or a 404; `lock` takes a row lock for a read-modify-write. */
export async function getLiveContact(
  db: Executor,
  orgId: string,
  id: string,
  lock = false,
): Promise<ContactData> {
  const query = db
    .select(contactColumns)
    .from(contacts)
    .where(and(eq(contacts.id, id), eq(contacts.orgId, orgId), isNull(contacts.deletedAt)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Contact');
  return row;
}

/** JSON text with object keys sorted, so values read back from jsonb compare equal to what was sent. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The editable state of a contact: what an update merges into. */
interface ContactState {
  leadId: string;
  name: string;
  title: string | null;
  emails: ContactEmail[];
  phones: ContactPhone[];
  custom: Record<string, unknown>;
}

/** Public names of the fields that differ, with their previous values (a custom key absent before is null). */
function diffContact(
  before: ContactData,
  next: ContactState,
): { changed: string[]; previous: Record<string, unknown> } {
  const changed: string[] = [];
  const previous: Record<string, unknown> = {};
  const note = (field: string, old: unknown) => {
    changed.push(field);
    previous[field] = old;
  };
  if (before.leadId !== next.leadId) note('lead_id', before.leadId);
  if (before.name !== next.name) note('name', before.name);
  if (before.title !== next.title) note('title', before.title);
  if (canonicalJson(before.emails) !== canonicalJson(next.emails)) note('emails', before.emails);
  if (canonicalJson(before.phones) !== canonicalJson(next.phones)) note('phones', before.phones);
  const customKeys = new Set([...Object.keys(before.custom), ...Object.keys(next.custom)]);
  for (const key of customKeys) {
    const had = Object.hasOwn(before.custom, key);
    const has = Object.hasOwn(next.custom, key);
    if (had !== has || canonicalJson(before.custom[key]) !== canonicalJson(next.custom[key])) {
      note(key, had ? before.custom[key] : null);
    }
  }
  return { changed, previous };
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

async function insertContact(
  ctx: ContactCtx,
  input: z.output<typeof createContactInput>,
): Promise<ContactRecord> {
  // An unknown, trashed or other-organization lead is a 404 "Lead not found", as for every child record.
  await getLiveLead(ctx.db, ctx.auth.orgId, input.lead_id);
  const [row] = await ctx.db
    .insert(contacts)
    .values({
      id: newId(ctx.now),
      orgId: ctx.auth.orgId,
      leadId: input.lead_id,
      name: input.name,
      title: input.title ?? null,
      emails: dedupeEmails(input.emails ?? []),
      phones: dedupePhones(input.phones ?? []),
      custom: additionalPropertiesOf(input, CREATE_KEYS),
      createdBy: ctx.auth.userId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning(contactColumns);
  if (!row) throw new Error('insert returned no contact');
  const record = serializeContact(row);
  await ctx.emit('contact.created', record);
  return record;
}

type PartialContactInput = {
  lead_id?: string | undefined;
  name?: string | undefined;
  title?: string | null | undefined;
  emails?: ContactEmail[] | undefined;
  phones?: ContactPhone[] | undefined;
};

/** Merge semantics: sent fields replace, custom keys merge, a custom key sent as null is removed. */
function mergeState(
  before: ContactData,
  input: PartialContactInput,
  custom: Record<string, unknown>,
): ContactState {
  const merged: Record<string, unknown> = { ...before.custom };
  for (const [key, value] of Object.entries(custom)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return {
    leadId: input.lead_id ?? before.leadId,
    name: input.name ?? before.name,
    title: input.title === undefined ? before.title : input.title,
    emails: input.emails === undefined ? before.emails : dedupeEmails(input.emails),
    phones: input.phones === undefined ? before.phones : dedupePhones(input.phones),
    custom: merged,
  };
}

/**
 * An opportunity names a contact of its own lead, so a contact still named by live opportunities
 * of its current lead cannot move away: the caller re-links or clears those first.
 */
async function assertMovable(db: Executor, contact: ContactData): Promise<void> {
  const [row] = await db
    .select({ n: count() })
    .from(opportunities)
    .where(
      and(
        eq(opportunities.orgId, contact.orgId),
        eq(opportunities.contactId, contact.id),
        eq(opportunities.leadId, contact.leadId),
        isNull(opportunities.deletedAt),
      ),
    );
  const linked = row?.n ?? 0;
  if (linked > 0) {
    throw new AppError('conflict', {
      message: `The contact is the contact of ${linked} opportunit${linked === 1 ? 'y' : 'ies'} of its lead; change their contact_id first`,
    });
  }
}

async function patchContact(
  ctx: ContactCtx,
  id: string,
  input: PartialContactInput,
  custom: Record<string, unknown>,
): Promise<ContactRecord> {
  const before = await getLiveContact(ctx.db, ctx.auth.orgId, id, true);
  const next = mergeState(before, input, custom);
  if (next.leadId !== before.leadId) {
    await assertMovable(ctx.db, before);
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
  const { changed, previous } = diffContact(before, next);
  if (changed.length === 0) return serializeContact(before);
  const [row] = await ctx.db
    .update(contacts)
    .set({
      leadId: next.leadId,
      name: next.name,
      title: next.title,
      emails: next.emails,
      phones: next.phones,
      custom: next.custom,
      updatedAt: ctx.now,
    })
    .where(and(eq(contacts.id, before.id), eq(contacts.orgId, ctx.auth.orgId)))
    .returning(contactColumns);
  if (!row) throw notFound('Contact');
  const record = serializeContact(row);
  await ctx.emit('contact.updated', { ...record, changed_fields: changed, previous_values: previous });
  return record;
}

async function trashContact(ctx: ContactCtx, id: string): Promise<void> {
  const before = await getLiveContact(ctx.db, ctx.auth.orgId, id, true);
  const [row] = await ctx.db
    .update(contacts)
    .set({ deletedAt: ctx.now, deletedBy: ctx.auth.userId })
    .where(and(eq(contacts.id, before.id), eq(contacts.orgId, ctx.auth.orgId)))
    .returning(contactColumns);
  if (!row) throw notFound('Contact');
  await ctx.emit('contact.deleted', { ...serializeContact(row), deleted_at: ctx.now.toISOString() });
}

/** Brings a contact deleted on its own back; one that went with its lead comes back with the lead. */
async function restoreContact(ctx: ContactCtx, id: string): Promise<ContactRecord> {
  const [before] = await ctx.db
    .select(contactColumns)
    .from(contacts)
    .where(and(eq(contacts.id, id), eq(contacts.orgId, ctx.auth.orgId), isNotNull(contacts.deletedAt)))
    .limit(1)
    .for('update');
  if (!before) throw notFound('Trash item');
  await assertLeadLive(ctx.db, ctx.auth.orgId, before.leadId);
  const [row] = await ctx.db
    .update(contacts)
    .set({ deletedAt: null, deletedBy: null, updatedAt: ctx.now })
    .where(and(eq(contacts.id, before.id), eq(contacts.orgId, ctx.auth.orgId)))
    .returning(contactColumns);
  if (!row) throw notFound('Trash item');
  const record = serializeContact(row);
  await ctx.emit('contact.updated', {
    ...record,
    changed_fields: ['deleted_at'],
    previous_values: { deleted_at: iso(before.deletedAt) },
  });
  return record;
}

/** The contact entry of the trash registry (the area's `trashTypes`, collected in tools/index.ts). */
export const contactTrashTypes: readonly TrashType[] = [
  {
    type: 'contact',
    recordKey: 'contact',
    resource: 'contacts',
    schema: contactSchema,
    table: contacts,
    columns: {
      id: contacts.id,
      orgId: contacts.orgId,
      name: contacts.name,
      deletedAt: contacts.deletedAt,
      deletedBy: contacts.deletedBy,
    },
    restore: restoreContact,
  },
];

// ---------------------------------------------------------------------------------------------
// Tools

const MAX_SEARCH_TERMS = 10;

/**
 * The contact search as a tsquery. The text search parser keeps an email address and a phone
 * number ("+14155550100") as one lexeme each, so a word of the search that holds "@" or is a number
 * also matches as the prefix of such a whole lexeme, beside the usual word-prefix match (the lead
 * search, prefixTsQuery of core/text-search.ts). Lexemes keep only letters, digits and "@._+-", so no
 * tsquery syntax gets through; the result is cast with ::tsquery as is. Null when nothing
 * searchable remains.
 */
export function contactTsQuery(search: string): string | null {
  // "+1 415-555 0100" is one phone number, not four words.
  const text = search
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\+?\d[\d\s\-.()]{5,}\d/g, (m) => m.replace(/[\s\-.()]/g, ''));
  const parts: string[] = [];
  for (const word of text.split(/\s+/).slice(0, MAX_SEARCH_TERMS)) {
    const pieces = word.match(/[\p{L}\p{N}]+/gu) ?? [];
    if (pieces.length === 0) continue;
    const byPieces = pieces.map((w) => `'${w}':*`).join(' & ');
    const token = word.replace(/[^\p{L}\p{N}@._+-]/gu, '');
    const wholes: string[] = [];
    if (token.includes('@') || /^\+\d+$/.test(token)) wholes.push(`'${token}':*`);
    if (/^\d{3,}$/.test(token)) wholes.push(`'+${token}':*`);
    parts.push(wholes.length === 0 ? `(${byPieces})` : `(${[...wholes, `(${byPieces})`].join(' | ')})`);
  }
  return parts.length === 0 ? null : parts.join(' & ');
}

const access = (
  kind: 'read' | 'write',
  permission: 'contacts.view' | 'contacts.create' | 'contacts.edit' | 'contacts.delete',
) => ({ kind, resource: 'contacts', permission }) as const;

const contactOutput = z.object({ contact: contactSchema });

const SORT_FIELDS = ['created_at', 'updated_at', 'name'] as const;

export const listContacts = defineTool({
  name: 'list_contacts',
  title: 'List contacts',
  description:
    'Lists the live contacts (people at leads) of the organization, newest first by default. Filter by `lead_id` to get the ' +
    'people of one lead. `search` finds contacts whose name, title, email address or phone number contain words starting with the given words (results ranked by relevance unless `sort` is given). ' +
    'Paginated: returns `contacts` plus `total`, `page`, `limit`, `totalPages`; request page 1, then increment `page` ' +
    'until page >= totalPages. `limit` is 1-100 (default 25).',
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    lead_id: objectId('lead').optional().describe('Only contacts of this lead'),
  }),
  output: pagedOutput('contacts', contactSchema),
  access: access('read', 'contacts.view'),
  async handler(input, { db, auth }) {
    const conditions: SQL[] = [eq(contacts.orgId, auth.orgId), isNull(contacts.deletedAt)];
    if (input.lead_id) conditions.push(eq(contacts.leadId, input.lead_id));
    const query = input.search === undefined ? null : contactTsQuery(input.search);
    // A search with no letters or digits in it can match nothing.
    if (input.search !== undefined && query === null) return paged('contacts', [], 0, input);
    if (query !== null) conditions.push(sql`${contacts.search} @@ ${query}::tsquery`);
    const where = and(...conditions);

    const order: SQL[] = [];
    if (input.sort) {
      const descending = input.sort.startsWith('-');
      const field = descending ? input.sort.slice(1) : input.sort;
      const direction = descending ? desc : asc;
      const column =
        field === 'name'
          ? sql`lower(${contacts.name})`
          : field === 'updated_at'
            ? contacts.updatedAt
            : contacts.createdAt;
      order.push(direction(column), direction(contacts.id));
    } else {
      if (query !== null) {
        order.push(desc(sql`ts_rank(${contacts.search}, ${query}::tsquery)`));
      }
      order.push(desc(contacts.createdAt), desc(contacts.id));
    }

    const [totalRow] = await db.select({ n: count() }).from(contacts).where(where);
    const rows = await db
      .select(contactColumns)
      .from(contacts)
      .where(where)
      .orderBy(...order)
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('contacts', rows.map(serializeContact), totalRow?.n ?? 0, input);
  },
});

export const getContact = defineTool({
  name: 'get_contact',
  title: 'Get a contact',
  description:
    'Returns one contact by id, with its emails, phones and additional properties. Use it when you hold an `_id`; find ids ' +
    'with list_contacts (filter by lead_id or search by name, email or phone). Trashed contacts and ids of other organizations answer 404.',
  input: z.strictObject(contactIdShape),
  output: contactOutput,
  access: access('read', 'contacts.view'),
  async handler(input, { db, auth }) {
    return { contact: serializeContact(await getLiveContact(db, auth.orgId, input.id)) };
  },
});

export const createContact = defineTool({
  name: 'create_contact',
  title: 'Create a contact',
  errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
  description:
    'Adds a person to a lead. `lead_id` (a live lead; 404 otherwise) and `name` are required; title, emails ' +
    '([{email, type: work|home|other}]) and phones ([{phone in international form, type: office|mobile|home|fax|other}]) are optional. ' +
    'Any other property (name starting with a letter, letters/digits/underscores, at most 100) is stored as an additional property. Returns the new contact.',
  input: createContactInput,
  output: contactOutput,
  access: access('write', 'contacts.create'),
  async handler(input, ctx) {
    return { contact: await insertContact(ctx, input) };
  },
});

export const updateContact = defineTool({
  name: 'update_contact',
  title: 'Update a contact',
  errors: [
    { code: 'not_found', when: 'lead_id names no live lead of the organization' },
    {
      code: 'conflict',
      when: 'moving the contact to another lead while opportunities of its lead name it as their contact',
    },
  ],
  description:
    'Changes only the fields sent of one contact and returns it. `emails` or `phones`, when sent, replace the whole list. ' +
    'Additional properties merge into the existing ones; one sent as null is removed; title sent as null is cleared. ' +
    '`lead_id` moves the contact to another live lead (refused with 409 while opportunities of its lead name it). A change that changes nothing emits no event.',
  input: updateContactInput,
  output: contactOutput,
  access: access('write', 'contacts.edit'),
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    return { contact: await patchContact(ctx, input.id, input, additionalPropertiesOf(input, UPDATE_KEYS)) };
  },
});

export const deleteContact = defineTool({
  name: 'delete_contact',
  title: 'Delete a contact',
  description:
    'Moves a contact to the trash: it disappears from the contact tools and can be brought back with restore_trash_item ' +
    '(while its lead is live). Opportunities naming it keep their contact_id.',
  input: z.strictObject(contactIdShape),
  output: messageOutput,
  access: access('write', 'contacts.delete'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'sales',
  async handler(input, ctx) {
    await trashContact(ctx, input.id);
    return { message: 'Contact moved to the trash' };
  },
});

export const contactTools: Tool[] = [listContacts, getContact, createContact, updateContact, deleteContact];
