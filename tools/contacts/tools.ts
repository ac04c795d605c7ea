// Contact tools: list, get, create, update and delete the people at a lead. The data functions are
// in store.ts (on the record helper, core/records.ts); this module holds the inputs, the contact
// search and the tool declarations.
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { ContactMovingHook } from '../../core/area.ts';
import type { SortColumn, TextMatch } from '../../core/records.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import {
  additionalPropertiesOf,
  NO_NUL,
  nulMessage,
  withAdditionalProperties,
} from '../../core/text-rules.ts';
import { defineTool, type Tool } from '../../core/tool.ts';
import {
  contactRecords,
  contactSchema,
  insertContact,
  patchContact,
  serializeContact,
  trashContact,
} from './store.ts';
import { contacts } from './tables.ts';

// Type labels stay open, as in other CRMs: integrations send office, mobile, direct, fax and their own
// words, and refusing an unknown one would lose the address with it. These are only the defaults.
const DEFAULT_EMAIL_TYPE = 'work';
const DEFAULT_PHONE_TYPE = 'office';
const typeLabel = (what: string) =>
  z.string().trim().min(1).max(50).refine(NO_NUL, nulMessage).describe(`Kind of ${what}`);
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
// Input fields

const leadIdField = objectId('lead').describe('Id of the live lead the contact belongs to');
const nameField = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .refine(NO_NUL, nulMessage)
  .describe("The person's full name");
const titleField = z
  .string()
  .trim()
  .max(200)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('Job title; null clears it');
const emailInput = z.strictObject({
  email: z
    .email({ message: 'must be a valid email address' })
    .max(320)
    .describe('Email address, e.g. jane@acme.example'),
  type: typeLabel('address, any label such as work, home, personal or other').default(DEFAULT_EMAIL_TYPE),
});
// Spaces, dashes, dots and brackets are formatting; what is stored is + and the digits (E.164).
const PHONE_MESSAGE = 'must be an international number: + then 7 to 15 digits (spaces and dashes allowed)';
const phoneInput = z.strictObject({
  phone: z
    .string()
    .max(50)
    // The pattern a client sees (OpenAPI, MCP) is the form it may send, formatting included, so the
    // example below passes a client's own schema check; the digit count is checked once stripped.
    .regex(/^[\s\-.()]*\+[\d\s\-.()]+$/, PHONE_MESSAGE)
    .overwrite((s) => s.replace(/[\s\-.()]/g, ''))
    .refine((s) => /^\+\d{7,15}$/.test(s), PHONE_MESSAGE)
    .describe('Phone number in international form, e.g. +1 415-555-0100'),
  type: typeLabel('number, any label such as office, mobile, direct, home or fax').default(
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
  lead_id: leadIdField.optional().describe('Moves the contact to this live lead'),
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
function contactTsQuery(search: string): string | null {
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

/** The contact search as SQL (contactTsQuery), ranked by relevance. */
function contactMatch(search: string): TextMatch | null {
  const query = contactTsQuery(search);
  if (query === null) return null;
  return {
    where: sql`${contacts.search} @@ ${query}::tsquery`,
    rank: sql`ts_rank(${contacts.search}, ${query}::tsquery)`,
  };
}

const access = (
  kind: 'read' | 'write',
  permission: 'contacts.view' | 'contacts.create' | 'contacts.edit' | 'contacts.delete',
) => ({ kind, resource: 'contacts', permission }) as const;

const contactOutput = z.object({ contact: contactSchema });

const SORT_FIELDS = ['created_at', 'updated_at', 'name'] as const;

/** The sort fields and what each orders by (names case-insensitively). */
const SORT_COLUMNS = {
  created_at: contacts.createdAt,
  updated_at: contacts.updatedAt,
  name: sql`lower(${contacts.name})`,
} satisfies Record<(typeof SORT_FIELDS)[number], SortColumn>;

export const listContacts = defineTool({
  name: 'list_contacts',
  title: 'List contacts',
  description:
    "Lists contacts (the people at leads), newest first: filter by `lead_id` for one lead's people, or search name, title, email or phone. Paged.",
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    lead_id: objectId('lead').optional().describe('Only contacts of this lead'),
  }),
  output: pagedOutput('contacts', contactSchema),
  access: access('read', 'contacts.view'),
  async handler(input, { db, auth }) {
    const conditions = contactRecords.liveConditions(auth.orgId);
    if (input.lead_id) conditions.push(eq(contacts.leadId, input.lead_id));
    return contactRecords.list(db, 'contacts', serializeContact, input, {
      conditions,
      sortColumns: SORT_COLUMNS,
      match: contactMatch,
    });
  },
});

export const getContact = defineTool({
  name: 'get_contact',
  title: 'Get a contact',
  description:
    'Returns one contact (a person at a lead) by `_id`, with emails, phones and additional properties. Find ids with list_contacts.',
  input: z.strictObject(contactIdShape),
  output: contactOutput,
  access: access('read', 'contacts.view'),
  async handler(input, { db, auth }) {
    return { contact: serializeContact(await contactRecords.getLive(db, auth.orgId, input.id)) };
  },
});

export const createContact = defineTool({
  name: 'create_contact',
  title: 'Create a contact',
  errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
  description:
    'Adds a contact person to a lead: `lead_id` and `name`, optional title, emails and phones; other properties are kept as additional properties.',
  input: createContactInput,
  output: contactOutput,
  access: access('write', 'contacts.create'),
  async handler(input, ctx) {
    return { contact: await insertContact(ctx, input, additionalPropertiesOf(input, CREATE_KEYS)) };
  },
});

/**
 * update_contact, built with the hooks of the areas whose records name a contact of its lead
 * (tools/index.ts collects them): each may refuse a move to another lead.
 */
export function updateContactTool(moving: readonly ContactMovingHook[]) {
  return defineTool({
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
      'Changes some fields of a contact; only the fields sent change. `emails` or `phones` replace the whole list; `lead_id` moves the contact to another lead.',
    input: updateContactInput,
    output: contactOutput,
    access: access('write', 'contacts.edit'),
    annotations: { idempotentHint: true },
    async handler(input, ctx) {
      return {
        contact: await patchContact(ctx, input.id, input, additionalPropertiesOf(input, UPDATE_KEYS), moving),
      };
    },
  });
}

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

/** The contact tools, with update_contact built from the contact-moving hooks. */
export function contactTools<U extends Tool>(updateContact: U) {
  return [listContacts, getContact, createContact, updateContact, deleteContact];
}
