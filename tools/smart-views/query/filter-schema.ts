// The request shape of a smart view's query, sort and columns, validated against the field
// catalogue: unknown fields, operators a field's kind does not support, and values of the wrong
// type for the operator all fail here with a field-level detail, before anything reaches SQL.
import { z } from 'zod';
import type { ScopeFamily } from '../../../core/access.ts';
import { NO_NUL, nulMessage } from '../../../core/text-rules.ts';
import {
  activityFieldKind,
  BUILT_IN_ACTIVITY_TYPES,
  catalogueKind,
  FIELD_CATALOGUE,
  FIELD_TYPE_FAMILY,
  FIELD_TYPES,
  type FieldKind,
  type FieldType,
  JSON_KEY,
  LEAD_COLUMNS,
  OPS,
  OPS_BY_KIND,
  type Op,
  SORTABLE_LEAD_FIELDS,
} from './catalogue.ts';

const MAX_FILTERS = 50;
const MAX_LIST_VALUES = 500;
const MAX_TEXT_VALUE = 1000;
const MAX_DISPLAY_COLUMNS = 50;

const OBJECT_ID = /^[0-9a-f]{24}$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

const filterText = (what: string, max = 100) =>
  z.string().min(1).max(max).refine(NO_NUL, nulMessage).describe(what);

const filterShape = {
  id: filterText('Your own identifier of this filter (1-100 characters), unique within the query'),
  field: filterText(
    'The field compared: a field of the field_type (lead: name, description, url, status, owner_id, tags, created_at, updated_at, converted_at; ' +
      'contact: name, title, email, phone; opportunity: status, value, confidence, currency, pipeline_stage, expected_close_date, owner_id, note; ' +
      'task: text, due_at, is_complete, assigned_to), the additional property key for custom_field, or "activity" (or the activity_field) for activity filters',
  ),
  field_type: z
    .enum(FIELD_TYPES)
    .describe(
      'What the field belongs to: lead, contact / opportunity / task (the lead has at least one live such record matching), ' +
        'activity (the lead has an activity of activity_type, optionally whose activity_field matches) or custom_field (an additional property of the lead)',
    ),
  op: z
    .enum(OPS)
    .describe(
      'Comparison: eq, neq, contains, not_contains, starts_with (text, case-insensitive), gt, gte, lt, lte, between [low, high] (numbers and dates), ' +
        'in, not_in (a list of up to 500 values), is_empty, is_not_empty (no value). Which ops a field takes depends on its type.',
    ),
  value: z
    .unknown()
    .optional()
    .describe(
      'The value compared against: a string, number or boolean matching the field type; an array for in/not_in; [low, high] for between; omitted for is_empty/is_not_empty. Dates are ISO 8601.',
    ),
  activity_type: filterText(
    'Activity filters only (required there): note, call, email, meeting, or the id of a custom activity type',
  ).optional(),
  activity_field: filterText(
    'Activity filters only, optional: the activity field to compare, e.g. outcome, direction, subject, or the columns occurred_at, user_id, contact_id. Without it, is_not_empty means "has such an activity" and is_empty "has none".',
  ).optional(),
  activity_field_value: z
    .unknown()
    .optional()
    .describe('Activity filters only: the value activity_field is compared against (same rules as value)'),
};

/** A filter after validation, with what the compiler and evaluator need spelled out. */
export interface ResolvedFilter {
  fieldType: FieldType;
  /** The field compared: a catalogue field, an additional property key, or the activity field (null: presence only). */
  field: string | null;
  kind: FieldKind | null;
  op: Op;
  value: unknown;
  /** Activity filters: the built-in type, or the custom activity type's id. */
  activityType: string | null;
}

type Issue = { path: (string | number)[]; message: string };

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function isCleanText(v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAX_TEXT_VALUE && NO_NUL(v);
}

/** A real calendar date YYYY-MM-DD in years 0001-9999 (PostgreSQL has no year 0). */
function isCalendarDate(v: string): boolean {
  const m = DATE_ONLY.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1) return false;
  const date = new Date(Date.UTC(2000, mo - 1, d));
  date.setUTCFullYear(y);
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const isoDateTime = z.iso.datetime({ offset: true });

/** An ISO 8601 date or date-time (with Z or an offset) that names a real instant. */
function isInstant(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  if (isCalendarDate(v)) return true;
  if (!isoDateTime.safeParse(v).success) return false;
  return isCalendarDate(v.slice(0, 10)) && !Number.isNaN(Date.parse(v));
}

/** The instant a timestamp filter value names, as an ISO string (a date alone is midnight UTC). */
export function instantOf(v: string): string {
  return new Date(isCalendarDate(v) ? `${v}T00:00:00Z` : v).toISOString();
}

/** Does `v` fit a scalar of `kind` for `op`? Returns the reason when not. */
function scalarProblem(kind: FieldKind, op: Op, v: unknown): string | null {
  switch (kind) {
    case 'text':
    case 'keyword':
    case 'id':
    case 'tags':
    case 'text_list':
      return isCleanText(v) ? null : `must be a string of at most ${MAX_TEXT_VALUE} characters without NUL`;
    case 'number':
      return isFiniteNumber(v) ? null : 'must be a finite number';
    case 'boolean':
      return typeof v === 'boolean' ? null : 'must be true or false';
    case 'timestamp':
      return isInstant(v) ? null : 'must be an ISO 8601 date (YYYY-MM-DD) or date-time with Z or an offset';
    case 'date':
      return typeof v === 'string' && isCalendarDate(v) ? null : 'must be a date YYYY-MM-DD';
    case 'json':
      if (op === 'contains' || op === 'not_contains' || op === 'starts_with') {
        return isCleanText(v) ? null : 'must be a string for this operator';
      }
      if (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte' || op === 'between') {
        return isFiniteNumber(v) ? null : 'must be a number for this operator';
      }
      if (op === 'in' || op === 'not_in') {
        return isCleanText(v) || isFiniteNumber(v) ? null : 'each value must be a string or a number';
      }
      return isCleanText(v) || isFiniteNumber(v) || typeof v === 'boolean'
        ? null
        : 'must be a string, a number or a boolean';
  }
}

function compareValues(kind: FieldKind, low: unknown, high: unknown): number {
  if (kind === 'timestamp' && typeof low === 'string' && typeof high === 'string') {
    return Date.parse(instantOf(low)) - Date.parse(instantOf(high));
  }
  if (typeof low === 'number' && typeof high === 'number') return low - high;
  if (typeof low === 'string' && typeof high === 'string') return low < high ? -1 : low > high ? 1 : 0;
  return 0;
}

/** Problems of the value for `op` on a field of `kind`, reported under `key`. */
function valueIssues(kind: FieldKind, op: Op, value: unknown, key: string): Issue[] {
  const at = (message: string, index?: number): Issue => ({
    path: index === undefined ? [key] : [key, index],
    message,
  });
  if (op === 'is_empty' || op === 'is_not_empty') {
    return value === undefined || value === null ? [] : [at(`${op} takes no value; leave ${key} out`)];
  }
  if (value === undefined || value === null) return [at(`${op} needs a value`)];
  if (op === 'in' || op === 'not_in') {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST_VALUES) {
      return [at(`${op} needs a non-empty array of at most ${MAX_LIST_VALUES} values`)];
    }
    return value.flatMap((v, i) => {
      const problem = scalarProblem(kind, op, v);
      return problem ? [at(problem, i)] : [];
    });
  }
  if (op === 'between') {
    if (!Array.isArray(value) || value.length !== 2) return [at('between needs [low, high]')];
    const problems = value.flatMap((v, i) => {
      const problem = scalarProblem(kind, op, v);
      return problem ? [at(problem, i)] : [];
    });
    if (problems.length > 0) return problems;
    return compareValues(kind, value[0], value[1]) > 0 ? [at('between needs low <= high')] : [];
  }
  const problem = scalarProblem(kind, op, value);
  return problem ? [at(problem)] : [];
}

function opIssues(kind: FieldKind, op: Op, what: string): Issue[] {
  const allowed = OPS_BY_KIND[kind];
  return allowed.includes(op)
    ? []
    : [{ path: ['op'], message: `"${op}" is not valid for ${what}; use one of: ${allowed.join(', ')}` }];
}

type FilterInput = z.output<z.ZodObject<typeof filterShape>>;

function activityIssues(f: FilterInput): Issue[] {
  const issues: Issue[] = [];
  const type = f.activity_type;
  if (type === undefined) {
    issues.push({ path: ['activity_type'], message: 'activity filters need activity_type' });
  } else if (!BUILT_IN_ACTIVITY_TYPES.some((t) => t === type) && !OBJECT_ID.test(type)) {
    issues.push({
      path: ['activity_type'],
      message: `must be one of ${BUILT_IN_ACTIVITY_TYPES.join(', ')} or a custom activity type id (24 hex characters)`,
    });
  }
  if (f.activity_field === undefined) {
    if (f.field !== 'activity')
      issues.push({ path: ['field'], message: 'must be "activity" for activity filters' });
    if (f.op !== 'is_empty' && f.op !== 'is_not_empty') {
      issues.push({
        path: ['op'],
        message: 'without activity_field use is_not_empty (has such an activity) or is_empty (has none)',
      });
    }
    for (const key of ['value', 'activity_field_value'] as const) {
      if (f[key] !== undefined && f[key] !== null) {
        issues.push({ path: [key], message: 'takes no value without activity_field' });
      }
    }
    return issues;
  }
  if (f.field !== 'activity' && f.field !== f.activity_field) {
    issues.push({
      path: ['field'],
      message: 'must be "activity" or the activity_field for activity filters',
    });
  }
  const kind = activityFieldKind(f.activity_field);
  if (kind === null) {
    issues.push({
      path: ['activity_field'],
      message: `must be occurred_at, user_id, contact_id or a field key (a letter, then letters, digits or underscores; at most 64)`,
    });
    return issues;
  }
  if (f.activity_field_value !== undefined && f.value !== undefined) {
    issues.push({ path: ['value'], message: 'send the comparison value in activity_field_value only' });
    return issues;
  }
  const key = f.value !== undefined ? 'value' : 'activity_field_value';
  issues.push(...opIssues(kind, f.op, `activity field ${f.activity_field}`));
  if (issues.length === 0) issues.push(...valueIssues(kind, f.op, f.activity_field_value ?? f.value, key));
  return issues;
}

function filterIssues(f: FilterInput): Issue[] {
  if (f.field_type === 'activity') return activityIssues(f);
  const issues: Issue[] = [];
  for (const key of ['activity_type', 'activity_field', 'activity_field_value'] as const) {
    if (f[key] !== undefined) issues.push({ path: [key], message: 'only allowed on activity filters' });
  }
  let kind: FieldKind | null;
  if (f.field_type === 'custom_field') {
    kind = JSON_KEY.test(f.field) ? 'json' : null;
    if (kind === null) {
      issues.push({
        path: ['field'],
        message:
          'must be an additional property name: a letter, then letters, digits or underscores (at most 64 characters)',
      });
    }
  } else {
    kind = catalogueKind(f.field_type, f.field);
    if (kind === null) {
      issues.push({
        path: ['field'],
        message: `unknown ${f.field_type} field; use one of: ${Object.keys(FIELD_CATALOGUE[f.field_type]).join(', ')}`,
      });
    }
  }
  if (kind === null) return issues;
  const opProblems = opIssues(kind, f.op, `the ${kind} field ${f.field}`);
  issues.push(...opProblems);
  if (opProblems.length === 0) issues.push(...valueIssues(kind, f.op, f.value, 'value'));
  return issues;
}

export const smartViewFilterSchema = z
  .strictObject(filterShape)
  .superRefine((f, ctx) => {
    for (const issue of filterIssues(f)) ctx.addIssue({ code: 'custom', ...issue });
  })
  .describe('One condition on the leads');
export type SmartViewFilter = z.output<typeof smartViewFilterSchema>;

export const smartViewQuerySchema = z
  .strictObject({
    filters: z
      .array(smartViewFilterSchema)
      .max(MAX_FILTERS)
      .describe(`The conditions, at most ${MAX_FILTERS}; an empty list matches every live lead`),
    logic: z
      .enum(['and', 'or'])
      .describe('and: a lead must match every filter; or: a lead must match at least one'),
  })
  .superRefine((q, ctx) => {
    const seen = new Set<string>();
    for (const [i, f] of q.filters.entries()) {
      if (seen.has(f.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['filters', i, 'id'],
          message: `duplicate filter id "${f.id}"`,
        });
      }
      seen.add(f.id);
    }
  })
  .describe('Which leads the view shows');
export type SmartViewQuery = z.output<typeof smartViewQuerySchema>;

const isLeadColumn = (v: string) => LEAD_COLUMNS.some((c) => c === v);

export const smartViewSortSchema = z
  .strictObject({
    field: z
      .string()
      .min(1)
      .max(64)
      .refine(
        (v) => SORTABLE_LEAD_FIELDS.some((c) => c === v) || (!isLeadColumn(v) && JSON_KEY.test(v)),
        `must be one of ${SORTABLE_LEAD_FIELDS.join(', ')} or an additional property name`,
      )
      .describe(
        `Lead field to sort by (${SORTABLE_LEAD_FIELDS.join(', ')}) or an additional property name; leads without a value come last`,
      ),
    direction: z
      .union([z.literal(1), z.literal(-1)])
      .describe('1 ascending, -1 descending; ties are broken by lead id in the same direction'),
  })
  .describe('Order of the results; default newest first (created_at descending)');
export type SmartViewSort = z.output<typeof smartViewSortSchema>;

export const displayColumnsSchema = z
  .array(
    z
      .string()
      .min(1)
      .max(64)
      .refine(
        (v) => isLeadColumn(v) || JSON_KEY.test(v),
        'must be a lead field or an additional property name',
      )
      .describe('A lead field or an additional property name'),
  )
  .max(MAX_DISPLAY_COLUMNS)
  .describe(
    `Columns the results show besides _id and name (at most ${MAX_DISPLAY_COLUMNS}: ${LEAD_COLUMNS.join(', ')} or additional property names); empty shows whole leads`,
  );

/** The scope families a query's filters read, each once, in filter order. */
export function familiesReadBy(query: SmartViewQuery): ScopeFamily[] {
  return [...new Set(query.filters.map((f) => FIELD_TYPE_FAMILY[f.field_type]))];
}

/** What the compiler and evaluator need of a filter that passed smartViewFilterSchema. */
export function resolveFilter(f: SmartViewFilter): ResolvedFilter {
  if (f.field_type === 'activity') {
    const field = f.activity_field ?? null;
    return {
      fieldType: 'activity',
      field,
      kind: field === null ? null : activityFieldKind(field),
      op: f.op,
      value: f.activity_field_value ?? f.value,
      activityType: f.activity_type ?? null,
    };
  }
  const kind = f.field_type === 'custom_field' ? 'json' : catalogueKind(f.field_type, f.field);
  if (kind === null) throw new Error(`unknown ${f.field_type} field ${f.field}`);
  return { fieldType: f.field_type, field: f.field, kind, op: f.op, value: f.value, activityType: null };
}
