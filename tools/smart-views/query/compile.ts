// Compiles a validated smart-view query into one SQL condition over `leads`. Every value a caller
// sent travels as a bound parameter of drizzle's `sql` template; every identifier comes from the
// catalogue's column map below, never from input (there is no sql.raw here). Filters on contacts,
// opportunities, tasks and activities are EXISTS subqueries correlated on (org_id, lead_id), so the
// (org_id, lead_id) indexes of those tables - and (org_id, type, lead_id) for activities - serve them.
import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
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
 * What a filter's facts (smart_view_facts, migration 0033) tell of it: `facts`, as
 * `smart_view_fact(...)` calls on bound values, are those a lead matching `f` must hold one of; the
 * filter is served when it is an equality on a string of a jsonb object (a custom field, or an
 * activity field that is not one of its columns). Every lead the filter's predicate accepts has such
 * a string, lower-cased equal to a value, and the trigger wrote that string's fact with the same
 * function. `exact` says the converse holds too: no asked fact is long enough to be hashed
 * (smart_view_fact keeps a fact of at most 256 bytes as its own text), so holding one is the
 * predicate itself and the view need not test it again on the lead.
 */
interface ServedFilter {
  facts: SQL[];
  exact: boolean;
}

/** Longest fact smart_view_fact keeps as its text (migration 0033); a longer one becomes an md5. */
const UNHASHED_FACT_BYTES = 256;
/**
 * Bytes a character may take once PostgreSQL lower-cases it, at most: a code point of up to 4 bytes
 * may become up to 3 code points (Unicode's special casing, under an ICU collation).
 */
const LOWERED_BYTES_PER_CHAR = 12;

/**
 * Whether smart_view_fact(scope, key, value) is surely kept as text: an upper bound of its length,
 * `scope:length(key):key=lower(value)`, within UNHASHED_FACT_BYTES. ASCII lower-cases to ASCII of the
 * same length; other text is bounded per character.
 */
function isUnhashedFact(scope: string, key: string, value: string): boolean {
  const prefix = Buffer.byteLength(`${scope}:${key.length}:${key}=`, 'utf8');
  const lowered = isAscii(value) ? value.length : [...value].length * LOWERED_BYTES_PER_CHAR;
  return prefix + lowered <= UNHASHED_FACT_BYTES;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

function servedFilter(f: ResolvedFilter): ServedFilter | null {
  const values = f.op === 'eq' ? [f.value] : f.op === 'in' ? listOf(f.value) : [];
  if (values.length === 0 || !values.every((v): v is string => typeof v === 'string')) return null;
  let scope: SQL;
  // The scope's text as smart_view_activity_scope spells it, for the length bound only.
  let scopeText: string;
  if (f.fieldType === 'custom_field') {
    scope = sql`'custom'`;
    scopeText = 'custom';
  } else if (f.fieldType === 'activity' && f.field !== null && !Object.hasOwn(ACTIVITY_COLUMNS, f.field)) {
    const type = f.activityType ?? '';
    const builtIn = BUILT_IN_ACTIVITY_TYPES.some((t) => t === type);
    scope = builtIn
      ? sql`smart_view_activity_scope(${type}::text, null)`
      : sql`smart_view_activity_scope('custom', ${type}::text)`;
    scopeText = builtIn ? `activity:${type}` : `activity:custom:${type}`;
  } else {
    return null;
  }
  const key = f.field ?? '';
  return {
    facts: values.map((v) => sql`smart_view_fact(${scope}, ${key}::text, ${v}::text)`),
    exact: values.every((v) => isUnhashedFact(scopeText, key, v)),
  };
}

/** The served filters of a query, or null when none can narrow it (see factCandidates). */
function servedFilters(query: SmartViewQuery): ServedFilter[] | null {
  const each = query.filters.map((f) => servedFilter(resolveFilter(f)));
  const served = each.filter((f): f is ServedFilter => f !== null);
  if (served.length === 0 || (query.logic === 'or' && served.length < each.length)) return null;
  return served;
}

/**
 * `select facts`: one row whose `facts` column lists, per served filter of the query, the texts of
 * its facts as smart_view_fact spells them (a JSON array of arrays), or null when no filter is
 * served. PostgreSQL spells them, so a fact asked is the very text the triggers stored; they are
 * then sent back to factCandidates as plain values, which the planner sees (a scalar subquery's
 * value it would not: it could not tell that one fact's range comes in lead order).
 */
export function spellFacts(query: SmartViewQuery): SQL | null {
  const served = servedFilters(query);
  if (served === null) return null;
  const lists = served.map((f) => sql`array[${sql.join(f.facts, sql`, `)}]`);
  return sql`select json_build_array(${sql.join(lists, sql`, `)}) as facts`;
}

/** The facts spellFacts' row lists, one array per served filter. */
export const spelledFactsSchema = z.object({ facts: z.array(z.array(z.string()).min(1)).min(1) });

/**
 * `fact = value` or `fact = any(values)`: a plain text equality, the only kind of condition that
 * reaches an index under row-level security (it is leakproof; lower() in smart_view_fact is not).
 */
function holdsFact(column: SQL | AnyPgColumn, facts: readonly string[]): SQL {
  const [only] = facts;
  if (facts.length === 1 && only !== undefined) return sql`${column} = ${only}::text`;
  return sql`${column} = any(${sql.param([...facts])}::text[])`;
}

/**
 * `select lead_id` of the leads holding the served filters' facts (`facts`, spellFacts' lists in
 * the same order), at most `cap` + 1 of them. Logic and: the leads of the first filter's facts that
 * hold each other filter's too, as semi joins, which PostgreSQL runs as a merge of index ranges
 * already in lead order when each filter has one fact (1M leads: 28 ms where an INTERSECT of the
 * same ranges took 52). Logic or (every filter served): the union of the filters' leads.
 * Every lead the query matches is among them (each lead a served filter's predicate accepts holds
 * its fact, written by the triggers with the same function on the same lower-cased text), so
 * compileSmartViewQuery(query, orgId, these ids) answers what the predicate alone answers.
 */
export function factCandidates(
  query: SmartViewQuery,
  orgId: string,
  cap: number,
  facts: readonly (readonly string[])[],
): SQL {
  const limit = cap + 1;
  if (query.logic === 'or') {
    const t = smartViewFacts;
    // A union holds each of its sets, so each may stop past the cap (a set that does makes the
    // union pass it too).
    const sets = facts.map(
      (list) =>
        sql`(select ${t.leadId} from ${t} where ${t.orgId} = ${orgId}::text and ${holdsFact(t.fact, list)} limit ${limit})`,
    );
    return sql`select lead_id from (${sql.join(sets, sql` union `)}) candidates limit ${limit}`;
  }
  // Each filter reads the table under its own name (f0, f1, ...), its columns named by the table's.
  const t = smartViewFacts;
  const [first, ...others] = facts.map((list, i) => {
    const name = sql.identifier(`f${i}`);
    const column = (c: AnyPgColumn) => sql`${name}.${sql.identifier(c.name)}`;
    return {
      from: sql`${t} as ${name}`,
      leadId: column(t.leadId),
      where: sql`${column(t.orgId)} = ${orgId}::text and ${holdsFact(column(t.fact), list)}`,
    };
  });
  if (!first) throw new Error('factCandidates without facts');
  const held = others.map(
    (other) =>
      sql` and exists (select 1 from ${other.from} where ${other.where} and ${other.leadId} = ${first.leadId})`,
  );
  // An activity's fact is held once per activity, and a filter's facts may be several: distinct.
  return sql`select distinct ${first.leadId} as lead_id from ${first.from} where ${first.where}${sql.join(held, sql``)} limit ${limit}`;
}

/**
 * The WHERE condition of a validated query over `leads`; the caller ANDs it with the organization
 * and `deleted_at is null`. No filters match every lead. With `candidates` (factCandidates' ids),
 * the condition keeps the leads to those and tests only what their facts do not settle: the filters
 * without exact facts (logic and), or none when every filter's facts are exact (logic or, where
 * every candidate holds one filter's fact). The same answer, read by primary key.
 */
export function compileSmartViewQuery(
  query: SmartViewQuery,
  orgId: string,
  candidates?: readonly string[],
): SQL {
  const resolved = query.filters.map(resolveFilter);
  const joiner = query.logic === 'or' ? sql` or ` : sql` and `;
  if (candidates === undefined) {
    if (resolved.length === 0) return sql`true`;
    return sql`(${sql.join(
      resolved.map((f) => sql`(${compileFilter(f, orgId)})`),
      joiner,
    )})`;
  }
  const settled = (f: ResolvedFilter) => servedFilter(f)?.exact === true;
  const rest =
    query.logic === 'or' ? (resolved.every(settled) ? [] : resolved) : resolved.filter((f) => !settled(f));
  const among = sql`${lead.id} = any(${sql.param([...candidates])}::text[])`;
  if (rest.length === 0) return among;
  return sql`(${among} and (${sql.join(
    rest.map((f) => sql`(${compileFilter(f, orgId)})`),
    joiner,
  )}))`;
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
