// Compiles a validated smart-view query into one SQL condition over `leads`. Every value a caller
// sent travels as a bound parameter of drizzle's `sql` template; every identifier comes from the
// catalogue's column map below, never from input (there is no sql.raw here). Filters on contacts,
// opportunities, tasks and activities are EXISTS subqueries correlated on (org_id, lead_id), so the
// (org_id, lead_id) indexes of those tables - and (org_id, type, lead_id) for activities - serve them.
import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { escapeLike } from '../../../core/db/sql.ts';
import {
  ACTIVITY_QUERY_COLUMNS,
  ACTIVITY_VALUES_COLUMN,
  liveActivitiesOfLead,
} from '../../activities/lookups.ts';
import { CONTACT_QUERY_COLUMNS, existsLiveContactOfLead } from '../../contacts/lookups.ts';
import { LEAD_QUERY_COLUMNS as lead } from '../../leads/lookups.ts';
import { existsLiveOpportunityOfLead, OPPORTUNITY_QUERY_COLUMNS } from '../../opportunities/lookups.ts';
import { existsLiveTaskOfLead, TASK_QUERY_COLUMNS } from '../../tasks/lookups.ts';
import { smartViewFacts } from '../tables.ts';
import {
  BUILT_IN_ACTIVITY_TYPES,
  type FieldKind,
  type Op,
  SORTABLE_LEAD_FIELDS,
  type SortableLeadField,
} from './catalogue.ts';
import {
  instantOf,
  type ResolvedFilter,
  resolveFilter,
  type SmartViewQuery,
  type SmartViewSort,
} from './filter-schema.ts';

/**
 * Catalogue field -> column, from the columns each area exports for a query over the leads
 * (its lookups.ts). Only these identifiers ever reach the SQL text.
 */
const LEAD_COLUMNS: Readonly<Record<string, AnyPgColumn>> = {
  name: lead.name,
  description: lead.description,
  url: lead.url,
  status: lead.status,
  owner_id: lead.owner_id,
  tags: lead.tags,
  created_at: lead.created_at,
  updated_at: lead.updated_at,
  converted_at: lead.converted_at,
};
const CONTACT_COLUMNS: Readonly<Record<string, AnyPgColumn>> = CONTACT_QUERY_COLUMNS;
/** The key of each element object of a contact's `emails` / `phones`. */
const CONTACT_LIST_KEYS: Readonly<Record<string, string>> = { email: 'email', phone: 'phone' };
const OPPORTUNITY_COLUMNS: Readonly<Record<string, AnyPgColumn>> = OPPORTUNITY_QUERY_COLUMNS;
const TASK_COLUMNS: Readonly<Record<string, AnyPgColumn>> = TASK_QUERY_COLUMNS;
const ACTIVITY_COLUMNS: Readonly<Record<string, AnyPgColumn>> = ACTIVITY_QUERY_COLUMNS;
const SORT_COLUMNS: Readonly<Record<SortableLeadField, AnyPgColumn>> = {
  name: lead.name,
  description: lead.description,
  url: lead.url,
  status: lead.status,
  owner_id: lead.owner_id,
  converted_at: lead.converted_at,
  created_at: lead.created_at,
  updated_at: lead.updated_at,
};
function isSortableLeadField(field: string): field is SortableLeadField {
  return SORTABLE_LEAD_FIELDS.some((f) => f === field);
}
const TEXT_SORT: ReadonlySet<string> = new Set(['name', 'description', 'url', 'status']);

function columnOf(map: Readonly<Record<string, AnyPgColumn>>, field: string): AnyPgColumn {
  const column = Object.hasOwn(map, field) ? map[field] : undefined;
  if (!column) throw new Error(`no column for smart-view field ${field}`);
  return column;
}

/** The positive operator a negative one negates. */
const NEGATES: Partial<Record<Op, Op>> = { neq: 'eq', not_contains: 'contains', not_in: 'in' };

/** `not coalesce(p, false)`: a negative op also matches where the positive one is unknown (null). */
function negate(positive: SQL): SQL {
  return sql`not coalesce((${positive}), false)`;
}

function orAll(parts: SQL[]): SQL {
  if (parts.length === 0) return sql`false`;
  return sql`(${sql.join(parts, sql` or `)})`;
}

function listOf(values: unknown): unknown[] {
  return Array.isArray(values) ? values : [];
}

function likeContains(text: SQL, value: unknown): SQL {
  return sql`lower(${text}) like '%' || lower(${escapeLike(String(value))}::text) || '%' escape '\\'`;
}

function likeStarts(text: SQL, value: unknown): SQL {
  return sql`lower(${text}) like lower(${escapeLike(String(value))}::text) || '%' escape '\\'`;
}

/** A typed bound parameter for a scalar of `kind`. */
function param(kind: FieldKind, value: unknown): SQL {
  switch (kind) {
    case 'number':
      return sql`${String(value)}::numeric`;
    case 'timestamp':
      return sql`${instantOf(String(value))}::timestamptz`;
    case 'date':
      return sql`${String(value)}::date`;
    case 'boolean':
      return sql`${value === true ? 'true' : 'false'}::boolean`;
    default:
      return sql`${String(value)}::text`;
  }
}

/** Positive op on a text expression, case-insensitive. */
function textPredicate(text: SQL, op: Op, value: unknown): SQL {
  switch (op) {
    case 'eq':
      return sql`lower(${text}) = lower(${String(value)}::text)`;
    case 'contains':
      return likeContains(text, value);
    case 'starts_with':
      return likeStarts(text, value);
    case 'in':
      return sql`lower(${text}) in (${sql.join(
        listOf(value).map((v) => sql`lower(${String(v)}::text)`),
        sql`, `,
      )})`;
    case 'is_empty':
      return sql`(${text} is null or ${text} = '')`;
    default:
      throw new Error(`op ${op} on text`);
  }
}

/**
 * Positive op on a keyword column. Stored keywords are lower case (validated enums), so equality and
 * in compare the column itself with the lower-cased value: the same result as lower() on both sides,
 * but an index on the column (leads_live_status_idx) can serve it and the planner estimates it.
 */
function keywordPredicate(column: SQL, op: Op, value: unknown): SQL {
  switch (op) {
    case 'eq':
      return sql`${column} = ${String(value).toLowerCase()}::text`;
    case 'in':
      return sql`${column} in (${sql.join(
        listOf(value).map((v) => sql`${String(v).toLowerCase()}::text`),
        sql`, `,
      )})`;
    default:
      return textPredicate(column, op, value);
  }
}

/** Positive op (or emptiness) on a scalar column of `kind` (not text, tags, lists or json). */
function scalarPredicate(expr: SQL, kind: FieldKind, op: Op, value: unknown): SQL {
  switch (op) {
    case 'eq':
      return sql`${expr} = ${param(kind, value)}`;
    case 'gt':
      return sql`${expr} > ${param(kind, value)}`;
    case 'gte':
      return sql`${expr} >= ${param(kind, value)}`;
    case 'lt':
      return sql`${expr} < ${param(kind, value)}`;
    case 'lte':
      return sql`${expr} <= ${param(kind, value)}`;
    case 'between': {
      const [low, high] = listOf(value);
      return sql`(${expr} >= ${param(kind, low)} and ${expr} <= ${param(kind, high)})`;
    }
    case 'in':
      return sql`${expr} in (${sql.join(
        listOf(value).map((v) => param(kind, v)),
        sql`, `,
      )})`;
    case 'is_empty':
      return kind === 'id' ? sql`(${expr} is null or ${expr} = '')` : sql`${expr} is null`;
    default:
      throw new Error(`op ${op} on ${kind}`);
  }
}

function tagsPredicate(expr: SQL, op: Op, value: unknown): SQL {
  if (op === 'is_empty') return sql`cardinality(${expr}) = 0`;
  const values = op === 'in' ? listOf(value) : [value];
  return sql`${expr} && array[${sql.join(
    values.map((v) => sql`${String(v)}::text`),
    sql`, `,
  )}]::text[]`;
}

/** A contact's emails/phones: positive ops match when any element's text does. */
function textListPredicate(list: SQL, key: string, op: Op, value: unknown): SQL {
  const elements = sql`jsonb_array_elements(case when jsonb_typeof(${list}) = 'array' then ${list} else '[]'::jsonb end)`;
  const item = sql`(sv_item ->> ${key}::text)`;
  if (op === 'is_empty') {
    return sql`not exists (select 1 from ${elements} as sv_el(sv_item) where coalesce(${item}, '') <> '')`;
  }
  return sql`exists (select 1 from ${elements} as sv_el(sv_item) where ${textPredicate(item, op, value)})`;
}

/** A key of a jsonb object: strings compare as text, numbers as numbers, booleans by equality. */
function jsonPredicate(object: SQL, key: string, op: Op, value: unknown): SQL {
  const json = sql`(${object} -> ${key}::text)`;
  const text = sql`(${object} ->> ${key}::text)`;
  const str = sql`(case when jsonb_typeof(${json}) = 'string' then ${text} end)`;
  // Guarded so a non-numeric value can never raise a cast error.
  const num = sql`(case when jsonb_typeof(${json}) = 'number' then (${text})::numeric end)`;
  switch (op) {
    case 'eq':
      if (typeof value === 'boolean') return sql`${json} = ${value ? 'true' : 'false'}::jsonb`;
      if (typeof value === 'number') return sql`${num} = ${param('number', value)}`;
      return textPredicate(str, 'eq', value);
    case 'contains':
    case 'starts_with':
      return textPredicate(str, op, value);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
    case 'between':
      return scalarPredicate(num, 'number', op, value);
    case 'in': {
      const values = listOf(value);
      const strings = values.filter((v) => typeof v === 'string');
      const numbers = values.filter((v) => typeof v === 'number');
      const parts: SQL[] = [];
      if (strings.length > 0) parts.push(textPredicate(str, 'in', strings));
      if (numbers.length > 0) parts.push(scalarPredicate(num, 'number', 'in', numbers));
      return orAll(parts);
    }
    case 'is_empty':
      return sql`coalesce(${text}, '') = ''`;
    default:
      throw new Error(`op ${op} on json`);
  }
}

/** The predicate of `op` on an expression of `kind`; negative ops and is_not_empty negate the positive one. */
function fieldPredicate(expr: SQL, kind: FieldKind, op: Op, value: unknown, listKey = ''): SQL {
  const positive = NEGATES[op] ?? (op === 'is_not_empty' ? 'is_empty' : null);
  if (positive !== null) return negate(fieldPredicate(expr, kind, positive, value, listKey));
  switch (kind) {
    case 'text':
      return textPredicate(expr, op, value);
    case 'keyword':
      return keywordPredicate(expr, op, value);
    case 'tags':
      return tagsPredicate(expr, op, value);
    case 'text_list':
      return textListPredicate(expr, listKey, op, value);
    case 'json':
      throw new Error('json fields go through jsonPredicate');
    default:
      return scalarPredicate(expr, kind, op, value);
  }
}

function jsonFieldPredicate(object: SQL, key: string, op: Op, value: unknown): SQL {
  const positive = NEGATES[op] ?? (op === 'is_not_empty' ? 'is_empty' : null);
  if (positive !== null) return negate(jsonPredicate(object, key, positive, value));
  return jsonPredicate(object, key, op, value);
}

function kindOf(f: ResolvedFilter): FieldKind {
  if (f.kind === null) throw new Error('filter without a field kind');
  return f.kind;
}

function columnPredicate(map: Readonly<Record<string, AnyPgColumn>>, f: ResolvedFilter): SQL {
  const field = f.field ?? '';
  return fieldPredicate(sql`${columnOf(map, field)}`, kindOf(f), f.op, f.value, CONTACT_LIST_KEYS[field]);
}

function activityCondition(f: ResolvedFilter, orgId: string): SQL {
  const type = f.activityType ?? '';
  const builtIn = BUILT_IN_ACTIVITY_TYPES.some((t) => t === type);
  const base = liveActivitiesOfLead(orgId, lead.id, type, builtIn);
  if (f.field === null) {
    return f.op === 'is_empty' ? sql`not exists (${base})` : sql`exists (${base})`;
  }
  const predicate = Object.hasOwn(ACTIVITY_COLUMNS, f.field)
    ? columnPredicate(ACTIVITY_COLUMNS, f)
    : jsonFieldPredicate(sql`${ACTIVITY_VALUES_COLUMN}`, f.field, f.op, f.value);
  return sql`exists (${base} and ${predicate})`;
}

function compileFilter(f: ResolvedFilter, orgId: string): SQL {
  switch (f.fieldType) {
    case 'lead':
      return columnPredicate(LEAD_COLUMNS, f);
    case 'custom_field':
      return jsonFieldPredicate(sql`${lead.custom}`, f.field ?? '', f.op, f.value);
    case 'contact':
      return existsLiveContactOfLead(orgId, lead.id, columnPredicate(CONTACT_COLUMNS, f));
    case 'opportunity':
      return existsLiveOpportunityOfLead(orgId, lead.id, columnPredicate(OPPORTUNITY_COLUMNS, f));
    case 'task':
      return existsLiveTaskOfLead(orgId, lead.id, columnPredicate(TASK_COLUMNS, f));
    case 'activity':
      return activityCondition(f, orgId);
  }
}

/**
 * The facts (smart_view_facts, migration 0033) a lead matching `f` must hold one of, as
 * `smart_view_fact(...)` calls on bound values, or null when `f` is not an equality on a string of
 * a jsonb object: a custom field, or an activity field that is not one of its columns. Every lead
 * the filter's predicate accepts has such a string, lower-cased equal to a value; the trigger wrote
 * that string's fact with the same function.
 */
function factsOf(f: ResolvedFilter): SQL[] | null {
  const values = f.op === 'eq' ? [f.value] : f.op === 'in' ? listOf(f.value) : [];
  if (values.length === 0 || !values.every((v) => typeof v === 'string')) return null;
  let scope: SQL;
  if (f.fieldType === 'custom_field') {
    scope = sql`'custom'`;
  } else if (f.fieldType === 'activity' && f.field !== null && !Object.hasOwn(ACTIVITY_COLUMNS, f.field)) {
    const type = f.activityType ?? '';
    scope = BUILT_IN_ACTIVITY_TYPES.some((t) => t === type)
      ? sql`smart_view_activity_scope(${type}::text, null)`
      : sql`smart_view_activity_scope('custom', ${type}::text)`;
  } else {
    return null;
  }
  const key = f.field ?? '';
  return values.map((v) => sql`smart_view_fact(${scope}, ${key}::text, ${String(v)}::text)`);
}

/**
 * The leads of the organization holding one of `facts`. The facts are computed once, in a scalar
 * subquery (an InitPlan; the cast keeps `any (...)` from reading it as a subquery of rows), so the
 * index condition is a plain text equality: under row-level security only a leakproof condition
 * reaches an index, and `lower()` inside smart_view_fact is not one.
 */
function leadsWithFacts(orgId: string, facts: SQL[]): SQL {
  const t = smartViewFacts;
  return sql`select ${t.leadId} from ${t} where ${t.orgId} = ${orgId}::text and ${t.fact} = any ((select array[${sql.join(facts, sql`, `)}])::text[])`;
}

/** The fact lists of the filters that narrow the query, or null when none can (see factCandidates). */
function servedFacts(filters: ResolvedFilter[], logic: 'and' | 'or'): SQL[][] | null {
  const facts = filters.map(factsOf);
  const served = facts.filter((f): f is SQL[] => f !== null);
  if (served.length === 0 || (logic === 'or' && served.length < facts.length)) return null;
  return served;
}

/**
 * `select lead_id` of the leads holding the served filters' facts, intersected (logic and) or united
 * when every filter is served (logic or), at most `cap` + 1 of them; null when no filter is served.
 * Every lead the query matches is among them (a necessary condition: each lead a served filter's
 * predicate accepts holds its fact, written by the triggers with the same function on the same
 * lower-cased text), so compileSmartViewQuery(query, orgId, these ids) answers what the exact
 * predicate alone answers, from these leads instead of every lead.
 */
export function factCandidates(query: SmartViewQuery, orgId: string, cap: number): SQL | null {
  const served = servedFacts(query.filters.map(resolveFilter), query.logic);
  if (served === null) return null;
  const sets = served.map((f) => leadsWithFacts(orgId, f));
  // A union holds each of its sets, so each may stop past the cap (a set that does makes the union
  // pass it too); an intersection may be small though every set is large, so it reads them whole.
  const combined =
    query.logic === 'or'
      ? sql.join(
          sets.map((set) => sql`(${set} limit ${cap + 1})`),
          sql` union `,
        )
      : sql.join(sets, sql` intersect `);
  return sql`select lead_id from (${combined}) candidates limit ${cap + 1}`;
}

/**
 * The WHERE condition of a validated query over `leads`; the caller ANDs it with the organization
 * and `deleted_at is null`. No filters match every lead. With `candidates` (factCandidates' ids),
 * the condition also keeps the leads to those: the same answer, read by primary key.
 */
export function compileSmartViewQuery(
  query: SmartViewQuery,
  orgId: string,
  candidates?: readonly string[],
): SQL {
  const parts = query.filters.map((f) => sql`(${compileFilter(resolveFilter(f), orgId)})`);
  if (parts.length === 0) return sql`true`;
  const exact = sql`(${sql.join(parts, query.logic === 'or' ? sql` or ` : sql` and `)})`;
  if (candidates === undefined) return exact;
  return sql`(${lead.id} = any(${sql.param([...candidates])}::text[]) and ${exact})`;
}

/** ORDER BY terms: the view's sort (values missing last), then the lead id in the same direction. */
/** Sorts an index of live leads serves (created_at, updated_at: never null, so no NULLS clause to match). */
const INDEXED_SORTS: ReadonlySet<string> = new Set(['created_at', 'updated_at']);

/** True when the view's order is the order of a leads index, so a page can be read by walking it. */
export function isIndexedSort(sort: SmartViewSort | null | undefined): boolean {
  return !sort || INDEXED_SORTS.has(sort.field);
}

export function compileSmartViewSort(sort: SmartViewSort | null | undefined): SQL[] {
  if (!sort) return [sql`${lead.created_at} desc`, sql`${lead.id} desc`];
  const direction = sort.direction === 1 ? sql`asc` : sql`desc`;
  if (INDEXED_SORTS.has(sort.field) && isSortableLeadField(sort.field)) {
    // Written without NULLS LAST so the order is exactly that of leads_live_created_idx /
    // leads_live_updated_idx (read backwards for ascending); the columns are NOT NULL anyway.
    return [sql`${SORT_COLUMNS[sort.field]} ${direction}`, sql`${lead.id} ${direction}`];
  }
  const known = isSortableLeadField(sort.field) ? SORT_COLUMNS[sort.field] : undefined;
  const expr = known
    ? TEXT_SORT.has(sort.field)
      ? sql`lower(${known})`
      : sql`${known}`
    : sql`nullif(${lead.custom} -> ${sort.field}::text, 'null'::jsonb)`;
  return [sql`${expr} ${direction} nulls last`, sql`${lead.id} ${direction}`];
}
