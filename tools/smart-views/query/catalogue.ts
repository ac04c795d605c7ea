// The typed field catalogue of smart views: every field a filter may name, per field_type, with the
// kind of value it holds. Validation (which ops and values are allowed), the SQL compiler (which
// column an identifier comes from) and the in-memory reference evaluator all read this one table,
// so a field cannot be filterable in one place and unknown in another.

import type { ScopeFamily } from '../../../core/access.ts';

export const FIELD_TYPES = ['lead', 'contact', 'opportunity', 'task', 'activity', 'custom_field'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const OPS = [
  'eq',
  'neq',
  'contains',
  'not_contains',
  'starts_with',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'not_in',
  'is_empty',
  'is_not_empty',
  'between',
] as const;
export type Op = (typeof OPS)[number];

/**
 * What a field holds, which decides its operators and value types:
 * - text: case-insensitive text; null and '' are empty.
 * - keyword: a lower-case enum value (lead and opportunity status); the text ops, with equality and
 *   in/not in compared exactly against the lower-cased value so the status indexes serve them.
 * - id: an id or keyword compared exactly (owner_id, assigned_to).
 * - number, boolean: as named.
 * - timestamp: an instant; values are ISO 8601 dates or date-times.
 * - date: a calendar date (YYYY-MM-DD).
 * - tags: a text array; contains/in mean "has at least one of" (exact tags).
 * - text_list: several texts of one record (a contact's emails or phones): positive ops match when
 *   any of them matches, negative ops when none does.
 * - json: a value of any JSON type in a jsonb object (lead additional properties, activity fields):
 *   strings compare as text, numbers as numbers, booleans by equality; other types never match.
 */
export type FieldKind =
  | 'text'
  | 'keyword'
  | 'id'
  | 'number'
  | 'boolean'
  | 'timestamp'
  | 'date'
  | 'tags'
  | 'text_list'
  | 'json';

export const OPS_BY_KIND: Readonly<Record<FieldKind, readonly Op[]>> = {
  text: ['eq', 'neq', 'contains', 'not_contains', 'starts_with', 'in', 'not_in', 'is_empty', 'is_not_empty'],
  keyword: [
    'eq',
    'neq',
    'contains',
    'not_contains',
    'starts_with',
    'in',
    'not_in',
    'is_empty',
    'is_not_empty',
  ],
  id: ['eq', 'neq', 'in', 'not_in', 'is_empty', 'is_not_empty'],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between', 'in', 'not_in', 'is_empty', 'is_not_empty'],
  boolean: ['eq', 'neq'],
  timestamp: ['gt', 'gte', 'lt', 'lte', 'between', 'is_empty', 'is_not_empty'],
  date: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between', 'is_empty', 'is_not_empty'],
  tags: ['contains', 'not_contains', 'in', 'not_in', 'is_empty', 'is_not_empty'],
  text_list: [
    'eq',
    'neq',
    'contains',
    'not_contains',
    'starts_with',
    'in',
    'not_in',
    'is_empty',
    'is_not_empty',
  ],
  json: [
    'eq',
    'neq',
    'contains',
    'not_contains',
    'starts_with',
    'gt',
    'gte',
    'lt',
    'lte',
    'between',
    'in',
    'not_in',
    'is_empty',
    'is_not_empty',
  ],
};

/** The record fields per field_type (custom_field and the activity's own fields are open: see below). */
export const FIELD_CATALOGUE = {
  lead: {
    name: 'text',
    description: 'text',
    url: 'text',
    status: 'keyword',
    owner_id: 'id',
    tags: 'tags',
    created_at: 'timestamp',
    updated_at: 'timestamp',
    converted_at: 'timestamp',
  },
  contact: { name: 'text', title: 'text', email: 'text_list', phone: 'text_list' },
  opportunity: {
    status: 'keyword',
    value: 'number',
    confidence: 'number',
    currency: 'text',
    pipeline_stage: 'text',
    expected_close_date: 'date',
    owner_id: 'id',
    note: 'text',
  },
  task: { text: 'text', due_at: 'timestamp', is_complete: 'boolean', assigned_to: 'id' },
  /** Columns of an activity usable as `activity_field`; any other key addresses `activities.fields`. */
  activity: { occurred_at: 'timestamp', user_id: 'id', contact_id: 'id' },
} as const satisfies Record<Exclude<FieldType, 'custom_field'>, Record<string, FieldKind>>;

/**
 * The scope family a filter on each field_type reads: a token running or saving such a filter needs
 * that family's read scope too (docs/contracts.md "Scopes for every tool"), or a `read:leads` key could
 * probe contacts' e-mails through a view. Tasks, activities and additional properties are lead
 * data. Sorts and display columns name only lead fields, so they never need more than the view.
 */
export const FIELD_TYPE_FAMILY = {
  lead: 'leads',
  contact: 'contacts',
  opportunity: 'opportunities',
  task: 'leads',
  activity: 'leads',
  custom_field: 'leads',
} as const satisfies Record<FieldType, ScopeFamily>;

export const BUILT_IN_ACTIVITY_TYPES = ['note', 'call', 'email', 'meeting'] as const;

/** Names of additional properties and activity field keys: the leads module's rule for custom keys. */
export const JSON_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** The kind of a catalogued field, or null when `field` is not one of `fieldType`'s fields. */
export function catalogueKind(
  fieldType: Exclude<FieldType, 'custom_field' | 'activity'>,
  field: string,
): FieldKind | null {
  const fields: Readonly<Record<string, FieldKind>> = FIELD_CATALOGUE[fieldType];
  return Object.hasOwn(fields, field) ? (fields[field] ?? null) : null;
}

/** The kind of an activity field: a catalogued column, else a key of `fields` (json), else null. */
export function activityFieldKind(field: string): FieldKind | null {
  const columns: Readonly<Record<string, FieldKind>> = FIELD_CATALOGUE.activity;
  if (Object.hasOwn(columns, field)) return columns[field] ?? null;
  return JSON_KEY.test(field) ? 'json' : null;
}

/** Lead fields a view may show as columns or sort by (besides additional properties). */
export const LEAD_COLUMNS = [
  'name',
  'description',
  'url',
  'status',
  'owner_id',
  'tags',
  'converted_at',
  'created_by',
  'created_at',
  'updated_at',
] as const;

export const SORTABLE_LEAD_FIELDS = [
  'name',
  'description',
  'url',
  'status',
  'owner_id',
  'converted_at',
  'created_at',
  'updated_at',
] as const;
export type SortableLeadField = (typeof SORTABLE_LEAD_FIELDS)[number];
