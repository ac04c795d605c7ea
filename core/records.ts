// The record helper: what every record resource (leads, contacts, opportunities, tasks...) repeats,
// written once. Areas keep only what is their own: their columns, their shape, their rules.
//
// An area declares its table with defineRecordTable(): the resource label of its 404s, the table
// (whose id, organization and trash columns the helper filters on), its owner column if any, and two
// typed query builders of its own (the select of its row shape and the update returning it), so the
// row type flows from the area's drizzle columns into every operation without a cast
// (docs/decisions.md, "The record helper"). The pure helpers (sortOrder, prefixMatch, mergePatch,
// mergeCustom, diffFields, changePayload) carry the list and update conventions.
import {
  and,
  asc,
  count,
  desc,
  eq,
  getTableColumns,
  inArray,
  isNotNull,
  isNull,
  or,
  type SQL,
  sql,
} from 'drizzle-orm';
import type { PgColumn, PgTable, SelectedFieldsFlat } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import type { Executor } from './db/client.ts';
import { compileRowSelect, type RowSelect } from './db/compiled-rows.ts';
import { users } from './db/schema.ts';
import { escapeLike, rowsOf } from './db/sql.ts';
import { notFound, validationError } from './errors.ts';
import type { EventName } from './events.ts';
import { newId } from './ids.ts';
import type { OwnedRecordTable, OwnershipChange, OwnershipContext } from './ownership.ts';
import { iso, offsetOf, type Page, paged } from './schemas.ts';
import { prefixTsQuery } from './text-search.ts';
import type { ToolContext } from './tool.ts';
import type { TrashType } from './trash.ts';

/** What the record operations that write need of a tool's context. */
export type RecordContext = Pick<ToolContext, 'db' | 'auth' | 'emit' | 'now'>;

// ---------------------------------------------------------------------------------------------
// Record shape

/** The fields every record shape ends with: who created it and when, and its last change. */
export function auditFields(what: string) {
  return {
    created_by: z.string().nullable().describe(`Id of the user who created the ${what}`),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  };
}

/**
 * A record's listed fields followed by its additional properties, the order its output schema
 * (a zod looseObject) gives the answer: the known fields are built as one object literal, which V8
 * keeps on a fast hidden class where spreading the additional properties first would not (the
 * serializer of every page row). A property named like a listed field never replaces it, and a
 * `__proto__` property stays an own property, as a spread would keep it.
 */
export function withAdditional<T extends Record<string, unknown>>(
  known: T,
  additional: Readonly<Record<string, unknown>>,
): T {
  for (const key of Object.keys(additional)) {
    if (Object.hasOwn(known, key)) continue;
    if (key === '__proto__') {
      Object.defineProperty(known, key, {
        value: additional[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      (known as Record<string, unknown>)[key] = additional[key];
    }
  }
  return known;
}

/** The values of auditFields, from a row's columns. */
export function auditValues(row: { createdBy: string | null; createdAt: Date; updatedAt: Date }) {
  return {
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Owners and assignees

/**
 * Whether `userId` may own or be assigned a record now: a live, active user of the organization.
 * The user row stays key-share locked for the rest of the transaction: a user deletion (which locks
 * its users FOR UPDATE) either waits for this assignment to commit and then moves the new record
 * too, or finishes first and this check sees it.
 */
export async function isAssignableUser(db: Executor, orgId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(
      and(eq(users.id, userId), eq(users.orgId, orgId), isNull(users.deletedAt), eq(users.status, 'active')),
    )
    .limit(1)
    .for('key share');
  return row !== undefined;
}

/** 400 `invalid_owner` on `field` unless the user may own records (see isAssignableUser). */
export async function assertAssignableOwner(
  db: Executor,
  orgId: string,
  ownerId: string,
  field = 'owner_id',
): Promise<void> {
  if (!(await isAssignableUser(db, orgId, ownerId))) {
    throw validationError([
      { field, message: 'must be the id of an active user of this organization', code: 'invalid_owner' },
    ]);
  }
}

// ---------------------------------------------------------------------------------------------
// Change bookkeeping (update events)

/** JSON text with object keys sorted, so values read back from jsonb compare equal to what was sent. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Equal as a field of an update event sees it: scalars by `===`, objects and lists as canonical JSON. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return a === b;
  return canonicalJson(a) === canonicalJson(b);
}

/** The fields an update changed (public names, in order) and their values before it. */
export interface Change {
  changed: string[];
  previous: Record<string, unknown>;
}

/** The fields an update event names, in order: [key of the state, public name]. */
export type FieldNames<K extends PropertyKey> = readonly (readonly [key: K, field: string])[];

/**
 * Compares `after` with `before` over the named fields, in the order of `names`, then the keys of
 * the additional properties (`custom`: before and after), before's keys first. A custom key absent
 * before has the previous value null.
 */
export function diffFields<B extends object, A extends object>(
  before: B,
  after: A,
  names: FieldNames<keyof A & keyof B>,
  custom?: readonly [Record<string, unknown>, Record<string, unknown>],
): Change {
  const change: Change = { changed: [], previous: {} };
  for (const [key, field] of names) {
    if (!sameValue(before[key], after[key])) noteChange(change, field, before[key]);
  }
  if (custom) {
    const [was, now] = custom;
    for (const key of new Set([...Object.keys(was), ...Object.keys(now)])) {
      const had = Object.hasOwn(was, key);
      if (had !== Object.hasOwn(now, key) || canonicalJson(was[key]) !== canonicalJson(now[key])) {
        noteChange(change, key, had ? was[key] : null);
      }
    }
  }
  return change;
}

/** Adds one changed field (at the end) with its previous value. */
export function noteChange(change: Change, field: string, previous: unknown): void {
  change.changed.push(field);
  change.previous[field] = previous;
}

/** What an `<x>.updated` payload adds to the record (a type, not an interface: payloads are plain objects). */
export type ChangeBookkeeping = {
  changed_fields: string[];
  previous_values: Record<string, unknown>;
};

/** An `<x>.updated` payload: the record with `changed_fields` and `previous_values`. */
export function changePayload<R extends object>(record: R, change: Change): R & ChangeBookkeeping {
  return { ...record, changed_fields: change.changed, previous_values: change.previous };
}

/** The columns every new record starts with: a fresh id, the organization, its creator and the time. */
export function newRecordStamp(ctx: { auth: { orgId: string; userId: string }; now: Date }) {
  return {
    id: newId(ctx.now),
    orgId: ctx.auth.orgId,
    createdBy: ctx.auth.userId,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
}

/** Emits `<x>.updated` for the record with the change's bookkeeping, and returns the record. */
export async function emitChange<E extends EventName, R extends object>(
  // Typed by the pair at the call site: the event's declared payload must take the record with its
  // change bookkeeping (core/events.ts EventCatalog).
  ctx: { emit: (event: E, data: R & ChangeBookkeeping) => Promise<void> },
  event: E,
  record: R,
  change: Change,
): Promise<R> {
  await ctx.emit(event, changePayload(record, change));
  return record;
}

/** The `<x>.updated` payload of a record a user deletion gave to an heir. */
export function ownerTransferPayload<R extends object>(record: R, fromUserId: string, field = 'owner_id') {
  return changePayload(record, { changed: [field], previous: { [field]: fromUserId } });
}

// ---------------------------------------------------------------------------------------------
// Merging (PATCH)

/** A patch of a state: a key sent replaces (null clears), a key absent or undefined keeps. */
export type Patch<S> = { [K in keyof S]?: S[K] | undefined };

/** PATCH semantics over a record's editable state: sent fields replace, absent keep, null clears. */
export function mergePatch<S extends object>(base: S, patch: Patch<S>): S {
  const merged = { ...base };
  for (const key in patch) {
    const value = patch[key];
    if (value !== undefined) merged[key] = value;
  }
  return merged;
}

/**
 * The columns of a write that were sent: a key whose value is undefined is left out, so the column
 * keeps its value (null still clears). Spread into an update's `set` instead of one conditional
 * spread per field.
 */
export function sentFields<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const sent: { [K in keyof T]?: Exclude<T[K], undefined> } = {};
  for (const key in fields) {
    const value = fields[key];
    if (value !== undefined) sent[key] = value as Exclude<T[typeof key], undefined>;
  }
  return sent;
}

/** Additional properties merged: sent keys replace, a key sent as null is removed. */
export function mergeCustom(
  before: Readonly<Record<string, unknown>>,
  sent: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...before };
  for (const [key, value] of Object.entries(sent)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

// ---------------------------------------------------------------------------------------------
// Sorting

/** What a sort field orders by: a column or expression; `nullsLast` puts rows without a value last both ways. */
export type SortColumn = PgColumn | SQL | { column: PgColumn | SQL; nullsLast: true };

/** `sort` as list tools take it: a field, ascending, or `-field`, descending. */
export function parseSort(sort: string): { field: string; descending: boolean } {
  const descending = sort.startsWith('-');
  return { field: descending ? sort.slice(1) : sort, descending };
}

/**
 * The ORDER BY of a list: `sort` looked up in the allow-list `columns`, with the record id in the
 * same direction breaking ties (so paging is stable), or `fallback` when no sort was asked for. A
 * field outside the allow-list (the tool's input schema already refuses it) is a 400.
 */
export function sortOrder<F extends string>(
  sort: string | undefined,
  columns: Readonly<Record<F, SortColumn>>,
  id: PgColumn,
  fallback: readonly SQL[],
): SQL[] {
  if (sort === undefined) return [...fallback];
  const { field, descending } = parseSort(sort);
  if (!isSortField(columns, field)) {
    const fields = Object.keys(columns).join(', ');
    throw validationError([{ field: 'sort', message: `must be one of: ${fields}`, code: 'invalid_sort' }]);
  }
  const by = columns[field];
  const direction = descending ? desc : asc;
  if ('nullsLast' in by) {
    const key = descending ? sql`${by.column} desc nulls last` : sql`${by.column} asc nulls last`;
    return [key, direction(id)];
  }
  return [direction(by), direction(id)];
}

/** A list's text search as SQL: the condition matching rows meet and the relevance they rank by. */
export interface TextMatch {
  where: SQL;
  /** Without one, a search keeps the newest-first order. */
  rank?: SQL;
}

/** The prefix search (prefixTsQuery) over a tsvector column; null when the text holds nothing searchable. */
export function prefixMatch(vector: PgColumn, text: string): TextMatch | null {
  const query = prefixTsQuery(text);
  if (query === null) return null;
  return {
    where: sql`${vector} @@ to_tsquery('simple', ${query})`,
    rank: sql`ts_rank(${vector}, to_tsquery('simple', ${query}))`,
  };
}

/**
 * The search of a numbered document (an invoice, an estimate): word prefixes of its text (the
 * tsvector column), or the start of its number as typed (`INV-0000`), which the words would split.
 */
export function numberOrWordsMatch(number: PgColumn, vector: PgColumn, text: string): TextMatch | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  const byNumber = sql`${number} ilike ${`${escapeLike(trimmed)}%`}`;
  const words = prefixMatch(vector, text);
  if (words === null) return { where: byNumber };
  const where = or(words.where, byNumber) ?? byNumber;
  return words.rank === undefined ? { where } : { where, rank: words.rank };
}

function isSortField<F extends string>(columns: Readonly<Record<F, SortColumn>>, field: string): field is F {
  return Object.hasOwn(columns, field);
}

// ---------------------------------------------------------------------------------------------
// Record tables

/**
 * The area's typed select, `db.select(columns).from(table).$dynamic()`: the helper adds the where,
 * order, paging and lock clauses, and the rows keep the area's row type.
 */
export interface RowQuery<Row> extends PromiseLike<Row[]> {
  /** The selection the query reads (drizzle's select builder), which listPage reuses beside a total. */
  readonly _: { readonly selectedFields: SelectedFieldsFlat };
  where(where: SQL | undefined): RowQuery<Row>;
  orderBy(...order: SQL[]): RowQuery<Row>;
  limit(limit: number): RowQuery<Row>;
  offset(offset: number): RowQuery<Row>;
  for(strength: 'update'): RowQuery<Row>;
}

/** What trash and restore write (every record table names its trash columns `deletedAt`/`deletedBy`). */
export interface TrashStamp {
  deletedAt: Date | null;
  deletedBy: string | null;
  updatedAt?: Date;
  /** Set by a restore that moves the owner of a table declared with `ownerId`. */
  ownerId?: string | null;
}

/** What the helper reads of every row. */
export interface RecordRow {
  id: string;
  deletedAt: Date | null;
}

/** The user a record belongs to (an owner, an assignee), for the restore rule and the ownership registry. */
export interface OwnerRule<Row> {
  column: PgColumn;
  /** Its public name in changed_fields (default `owner_id`). */
  field?: string;
  of(row: Row): string | null;
  /** The update setting it. */
  set(userId: string | null): Partial<Row>;
  /** On restore, an unowned record also goes to the restoring user (default: it stays unowned). */
  claimUnowned?: boolean;
}

/** The columns the helper filters on and the registries name. */
export interface RecordColumns {
  id: PgColumn;
  orgId: PgColumn;
  deletedAt: PgColumn;
  deletedBy: PgColumn;
  updatedAt?: PgColumn;
  /** The default order of lists (newest first); needed by `list`. */
  createdAt?: PgColumn;
}

/** The paged list envelope (core/schemas.ts paged). */
export type PagedList<K extends string, T> = { [P in K]: T[] } & {
  total: number;
  page: number;
  limit: number;
  totalPages: number;
};

/** The list parameters of a list tool's input (core/schemas.ts listParams). */
export interface ListParams extends Page {
  sort?: string | undefined;
  search?: string | undefined;
}

/** What a list tool declares of its own for `list`. */
export interface ListQuery<F extends string> {
  /** The organization's live rows (liveConditions) and the tool's filters. */
  conditions: readonly SQL[];
  /** The sort allow-list (the fields listParams was given). */
  sortColumns: Readonly<Record<F, SortColumn>>;
  /** How a `search` becomes SQL; null when the text can match nothing. */
  match?(search: string): TextMatch | null;
  /**
   * The total when the caller knows it without counting the rows: a scalar SQL expression (a
   * counter), read in the page's own statement (listPage), or a function of its own (a count that
   * needs a statement first, such as a search's words). Counted in the page's statement otherwise.
   */
  total?: SQL<number> | (() => Promise<number>);
  /** Rank by relevance only while the matches are at most this many (ranking reads every match). */
  rankedUpTo?: number;
}

export interface RecordTableSpec<Row extends RecordRow> {
  /** The resource as 404s name it: `Lead` -> "Lead not found". */
  label: string;
  table: PgTable;
  /**
   * Default: the table's own `id`, `orgId`, `deletedAt`, `deletedBy` and (if it has one) `updatedAt`,
   * the names the column helpers of core/db/schema.ts give them.
   */
  columns?: RecordColumns;
  /** `db.select(columns).from(table).$dynamic()` */
  select(db: Executor): RowQuery<Row>;
  /** `db.update(table).set(set).where(where).returning(columns)` */
  update(db: Executor, set: Partial<Row> | TrashStamp, where: SQL | undefined): PromiseLike<Row[]>;
  /** The owner as the table's `ownerId` column (public name owner_id); `owner` for any other. */
  ownerId?: PgColumn;
  owner?: OwnerRule<Row>;
}

/** A restored record with the bookkeeping of its `<x>.updated` event (deleted_at, and the owner if it moved). */
export interface Restored<Row> extends Change {
  before: Row;
  row: Row;
}

/** A trash registry entry but for what the record table already knows. */
export type TrashEntry = Omit<TrashType, 'table' | 'columns'> & { name: PgColumn | SQL };

export interface RecordTable<Row extends RecordRow> extends RecordTableSpec<Row> {
  columns: RecordColumns;
  /** The conditions every list starts from: the organization's live rows (a fresh, growable list). */
  liveConditions(orgId: string): SQL[];
  /** Live (not trashed) record of the organization, or a 404; `lock` takes a row lock for a read-modify-write. */
  getLive(db: Executor, orgId: string, id: string, lock?: boolean): Promise<Row>;
  /** Trashed record of the organization, row-locked, or a 404 `Trash item`. */
  getTrashed(db: Executor, orgId: string, id: string): Promise<Row>;
  /** The organization's records with these ids, trashed or not, in no particular order. */
  byIds(db: Executor, orgId: string, ids: readonly string[]): Promise<Row[]>;
  count(db: Executor, where: SQL | undefined): Promise<number>;
  /**
   * One page of the rows matching `where` in `order`, with the total: given as a number, read
   * from a given scalar expression (a counter), or counted. An expression or the count rides in the
   * page's own statement, one round trip for both; only an empty page asks for it on its own.
   */
  listPage(
    db: Executor,
    query: { where: SQL | undefined; order: readonly SQL[]; page: Page; total?: number | SQL<number> },
  ): Promise<{ rows: Row[]; total: number }>;
  /**
   * A list tool's answer: the rows meeting the conditions and the search, in the asked sort (the
   * allow-list, id breaking ties) or else by relevance when searching, then newest first; one page
   * of them serialized, in the envelope under `key`. A search that can match nothing is an empty page.
   */
  list<K extends string, F extends string, Out>(
    db: Executor,
    key: K,
    serialize: (row: Row) => Out,
    params: ListParams,
    query: ListQuery<F>,
  ): Promise<PagedList<K, Out>>;
  /** The row an INSERT ... RETURNING gave back, serialized, announced with `event` (`<x>.created`) and returned. */
  created<E extends EventName, Out extends Record<string, unknown>>(
    // Typed by the pair at the call site: the event's declared payload must take the serialized record.
    ctx: { emit: (event: E, data: Out) => Promise<void> },
    event: E,
    serialize: (row: Row) => Out,
    rows: readonly Row[],
  ): Promise<Out>;
  /** Updates the record (found or not: a 404) and returns it. */
  write(db: Executor, orgId: string, id: string, set: Partial<Row>): Promise<Row>;
  /** Moves a live record to the trash (stamped with the caller and `now`) and returns it. */
  trash(ctx: RecordContext, id: string): Promise<Row>;
  /**
   * Brings a trashed record back. `check` may refuse it first (e.g. its lead is in the trash). An
   * owner who has since been deleted or deactivated cannot keep it, so the restoring user becomes
   * the owner rather than leaving it pointing at nobody.
   */
  restore(ctx: RecordContext, id: string, check?: (before: Row) => Promise<void>): Promise<Restored<Row>>;
  /** Its entry of the trash registry. */
  trashType(entry: TrashEntry): TrashType;
  /** Its entry of the owned-record registry (needs the owner rule). */
  ownedRecords(entry: {
    name: string;
    announce(ctx: OwnershipContext, ids: readonly string[], change: OwnershipChange): Promise<void>;
  }): OwnedRecordTable;
}

/** `select count(*) from table where …` as a scalar subquery (the total of a counted list). */
function countSql(table: PgTable, where: SQL | undefined): SQL<number> {
  return where
    ? sql<number>`select count(*) from ${table} where ${where}`
    : sql<number>`select count(*) from ${table}`;
}

/** The value of a scalar SQL expression (a counter read, a count) on its own. */
async function scalar(db: Executor, expression: SQL<number>): Promise<number> {
  const [row] = rowsOf(await db.execute(sql`select (${expression}) as n`));
  const n = typeof row === 'object' && row !== null && 'n' in row ? row.n : null;
  return Number(n ?? 0);
}

/** A record table: the spec's own parts plus the operations every record resource shares. */
export function defineRecordTable<Row extends RecordRow>(spec: RecordTableSpec<Row>): RecordTable<Row> {
  const { label, table } = spec;
  const c = spec.columns ?? recordColumnsOf(label, table);
  const owner = resolveOwner(spec);
  const own = (orgId: string, id: string) => and(eq(c.id, id), eq(c.orgId, orgId));
  // The spec's selection compiled once (core/db/row-select.ts), on the first read: the select
  // builder needs a database handle to be built, any handle gives the same selection. Null: a
  // selection the compiled statements do not cover, read through the spec's select.
  let compiled: RowSelect<Row> | null | undefined;
  const compiledFor = (db: Executor): RowSelect<Row> | null => {
    if (compiled === undefined)
      compiled = compileRowSelect<Row>(table, spec.select(db)._.selectedFields) ?? null;
    return compiled;
  };

  const records: RecordTable<Row> = {
    ...spec,
    columns: c,
    liveConditions: (orgId) => [eq(c.orgId, orgId), isNull(c.deletedAt)],

    async getLive(db, orgId, id, lock = false) {
      const where = and(eq(c.id, id), eq(c.orgId, orgId), isNull(c.deletedAt));
      const select = compiledFor(db);
      let row: Row | undefined;
      if (select) {
        [row] = await select.rows(db, sql`where ${where} limit 1${lock ? sql` for update` : sql``}`);
      } else {
        const query = spec.select(db).where(where).limit(1);
        [row] = lock ? await query.for('update') : await query;
      }
      if (!row) throw notFound(label);
      return row;
    },

    async getTrashed(db, orgId, id) {
      const where = and(eq(c.id, id), eq(c.orgId, orgId), isNotNull(c.deletedAt));
      const select = compiledFor(db);
      const [row] = select
        ? await select.rows(db, sql`where ${where} limit 1 for update`)
        : await spec.select(db).where(where).limit(1).for('update');
      if (!row) throw notFound('Trash item');
      return row;
    },

    async byIds(db, orgId, ids) {
      const where = and(eq(c.orgId, orgId), inArray(c.id, [...ids]));
      const select = compiledFor(db);
      return select ? select.rows(db, sql`where ${where}`) : spec.select(db).where(where);
    },

    async count(db, where) {
      const [row] = await db.select({ n: count() }).from(table).where(where);
      return row?.n ?? 0;
    },

    async listPage(db, { where, order, page, total }) {
      const select = compiledFor(db);
      if (select) {
        const tail = sql`${where ? sql`where ${where} ` : sql``}order by ${sql.join([...order], sql`, `)} limit ${page.limit} offset ${offsetOf(page)}`;
        if (typeof total === 'number') return { rows: await select.rows(db, tail), total };
        const totalSql = total ?? countSql(table, where);
        const found = await select.rowsWith(db, totalSql, tail);
        // No row carried the total (no match, or a page past the end): it is read on its own.
        if (found.extra === undefined) return { rows: [], total: await scalar(db, totalSql) };
        return { rows: found.rows, total: Number(found.extra) };
      }
      if (typeof total === 'number') {
        const rows = await spec
          .select(db)
          .where(where)
          .orderBy(...order)
          .limit(page.limit)
          .offset(offsetOf(page));
        return { rows, total };
      }
      const totalSql = total ?? countSql(table, where);
      // The spec's own selection, nested under `row`, beside the total: drizzle maps each row as
      // the spec's select would, and the statement is the page's with one scalar column more.
      const fields = spec.select(db)._.selectedFields;
      const found = await db
        .select({ row: fields, total: sql<number>`(${totalSql})`.mapWith(Number) })
        .from(table)
        .where(where)
        .orderBy(...order)
        .limit(page.limit)
        .offset(offsetOf(page));
      const first = found[0];
      // No row carried the total (no match, or a page past the end): it is read on its own.
      if (!first) return { rows: [], total: await scalar(db, totalSql) };
      return { rows: found.map((r) => r.row as Row), total: first.total };
    },

    async list(db, key, serialize, params, query) {
      const conditions = [...query.conditions];
      let rank: SQL | undefined;
      if (params.search !== undefined) {
        if (!query.match) throw new Error(`${label}: a list with search needs match`);
        const match = query.match(params.search);
        // A search with no letters or digits in it can match nothing.
        if (match === null) return paged(key, [], 0, params);
        conditions.push(match.where);
        rank = match.rank;
      }
      const where = and(...conditions);
      if (!c.createdAt) throw new Error(`${label}: list needs a createdAt column`);
      // Ranking by relevance depends on how many match, so a capped ranked search counts first;
      // every other list reads its total in the page's statement (listPage).
      let total: number | SQL<number> | undefined =
        typeof query.total === 'function' ? await query.total() : query.total;
      let ranked: SQL[] = [];
      if (rank) {
        if (query.rankedUpTo !== undefined) {
          if (typeof total !== 'number')
            total = total ? await scalar(db, total) : await records.count(db, where);
          if (total <= query.rankedUpTo) ranked = [desc(rank)];
        } else {
          ranked = [desc(rank)];
        }
      }
      const order = sortOrder(params.sort, query.sortColumns, c.id, [
        ...ranked,
        desc(c.createdAt),
        desc(c.id),
      ]);
      const page = await records.listPage(db, {
        where,
        order,
        page: params,
        ...(total === undefined ? {} : { total }),
      });
      return paged(key, page.rows.map(serialize), page.total, params);
    },

    async created(ctx, event, serialize, rows) {
      const [row] = rows;
      if (!row) throw new Error(`insert returned no ${label.toLowerCase()}`);
      const record = serialize(row);
      await ctx.emit(event, record);
      return record;
    },

    async write(db, orgId, id, set) {
      const [row] = await spec.update(db, set, own(orgId, id));
      if (!row) throw notFound(label);
      return row;
    },

    async trash(ctx, id) {
      const before = await records.getLive(ctx.db, ctx.auth.orgId, id, true);
      const stamp: TrashStamp = { deletedAt: ctx.now, deletedBy: ctx.auth.userId };
      const [row] = await spec.update(ctx.db, stamp, own(ctx.auth.orgId, before.id));
      if (!row) throw notFound(label);
      return row;
    },

    async restore(ctx, id, check) {
      const before = await records.getTrashed(ctx.db, ctx.auth.orgId, id);
      if (check) await check(before);
      const change: Change = { changed: ['deleted_at'], previous: { deleted_at: iso(before.deletedAt) } };
      const stamp: TrashStamp = { deletedAt: null, deletedBy: null, updatedAt: ctx.now };
      const set = owner ? owner.stamp(stamp, await restoredOwner(ctx, owner, before, change)) : stamp;
      const [row] = await spec.update(ctx.db, set, own(ctx.auth.orgId, before.id));
      if (!row) throw notFound('Trash item');
      return { before, row, ...change };
    },

    trashType(entry) {
      const { name, ...rest } = entry;
      return {
        ...rest,
        table,
        columns: { id: c.id, orgId: c.orgId, name, deletedAt: c.deletedAt, deletedBy: c.deletedBy },
      };
    },

    ownedRecords(entry) {
      if (!owner) throw new Error(`${label}: an owned-record entry needs the owner rule`);
      return {
        ...entry,
        table,
        orgId: c.orgId,
        ownerId: owner.column,
        deletedAt: c.deletedAt,
        deletedBy: c.deletedBy,
        ...(c.updatedAt ? { updatedAt: c.updatedAt } : {}),
      };
    },
  };
  return records;
}

/** The columns of a table built with the core/db/schema.ts helpers (a definition error when one is missing). */
function recordColumnsOf(label: string, table: PgTable): RecordColumns {
  const all = getTableColumns(table);
  const { id, orgId, deletedAt, deletedBy, updatedAt, createdAt } = all;
  if (!id || !orgId || !deletedAt || !deletedBy) {
    throw new Error(
      `${label}: the table has no id, orgId, deletedAt or deletedBy column; declare \`columns\``,
    );
  }
  return {
    id,
    orgId,
    deletedAt,
    deletedBy,
    ...(updatedAt ? { updatedAt } : {}),
    ...(createdAt ? { createdAt } : {}),
  };
}

/** The owner rule with its defaults, and how a restore stamp sets the owner. */
interface ResolvedOwner<Row> {
  column: PgColumn;
  field: string;
  claimUnowned: boolean;
  of(row: Row): string | null;
  stamp(stamp: TrashStamp, userId: string | null): Partial<Row> | TrashStamp;
}

function resolveOwner<Row extends RecordRow>(spec: RecordTableSpec<Row>): ResolvedOwner<Row> | undefined {
  const rule = spec.owner;
  if (rule) {
    return {
      column: rule.column,
      field: rule.field ?? 'owner_id',
      claimUnowned: rule.claimUnowned ?? false,
      of: rule.of,
      stamp: (stamp, userId) => ({ ...stamp, ...rule.set(userId) }),
    };
  }
  if (!spec.ownerId) return undefined;
  return {
    column: spec.ownerId,
    field: 'owner_id',
    claimUnowned: false,
    of: ownerIdOf,
    stamp: (stamp, ownerId) => ({ ...stamp, ownerId }),
  };
}

/** The `ownerId` of a row of a table declared with `ownerId`. */
function ownerIdOf(row: object): string | null {
  if ('ownerId' in row && (typeof row.ownerId === 'string' || row.ownerId === null)) return row.ownerId;
  throw new Error('a record declared with ownerId has a row without an ownerId');
}

/** The owner a restored record gets: its own while assignable, else the restoring user (noted in `change`). */
async function restoredOwner<Row>(
  ctx: RecordContext,
  owner: ResolvedOwner<Row>,
  before: Row,
  change: Change,
): Promise<string | null> {
  const ownerId = owner.of(before);
  if (ownerId === null) return owner.claimUnowned ? ctx.auth.userId : null;
  if (await isAssignableUser(ctx.db, ctx.auth.orgId, ownerId)) return ownerId;
  noteChange(change, owner.field, ownerId);
  return ctx.auth.userId;
}

// ---------------------------------------------------------------------------------------------
// Additions for tasks, activities and custom objects (branch area-split), kept apart from the
// above: a live lookup within a scope, and named settings tables without a trash.

/**
 * `records.getLive` for a record that must also meet `scope` (a custom object's record under the
 * object named in its path): a row outside the scope is a 404 like a missing one, and is not locked.
 */
export async function getLiveWithin<Row extends RecordRow>(
  records: RecordTable<Row>,
  db: Executor,
  orgId: string,
  id: string,
  scope: SQL,
  lock = false,
): Promise<Row> {
  const c = records.columns;
  const query = records
    .select(db)
    .where(and(eq(c.id, id), eq(c.orgId, orgId), scope, isNull(c.deletedAt)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound(records.label);
  return row;
}

/** One page of `select` over `table`: the rows matching `where` counted first, then the page in `order`. */
async function selectPage<Row>(
  db: Executor,
  table: PgTable,
  select: RowQuery<Row>,
  query: { where: SQL | undefined; order: readonly SQL[]; page: Page },
): Promise<{ rows: Row[]; total: number }> {
  const [counted] = await db.select({ n: count() }).from(table).where(query.where);
  const rows = await select
    .where(query.where)
    .orderBy(...query.order)
    .limit(query.page.limit)
    .offset(offsetOf(query.page));
  return { rows, total: counted?.n ?? 0 };
}

/** A typed select (see RowQuery) whose lookups may also lock for share. */
export interface LockableRowQuery<Row> extends RowQuery<Row> {
  where(where: SQL | undefined): LockableRowQuery<Row>;
  limit(limit: number): LockableRowQuery<Row>;
  for(strength: 'update' | 'share'): LockableRowQuery<Row>;
}

/**
 * A table of workspace settings: named rows of the organization that are deleted for good, never
 * trashed (custom object definitions, custom activity types). Their lists search the name and sort
 * by it (case-insensitively), by creation or by last change, newest first by default.
 */
export interface SettingsTableSpec<Row> {
  /** The resource as 404s name it: `Custom object` -> "Custom object not found". */
  label: string;
  /** The table, whose columns the helper reads by their core/db/schema.ts names. */
  table: PgTable & {
    id: PgColumn;
    orgId: PgColumn;
    name: PgColumn;
    createdAt: PgColumn;
    updatedAt: PgColumn;
  };
  /** `db.select(columns).from(table).$dynamic()` */
  select(db: Executor): LockableRowQuery<Row>;
  /** `db.update(table).set(set).where(where).returning(columns)` */
  update(db: Executor, set: Partial<Row>, where: SQL | undefined): PromiseLike<Row[]>;
}

export interface SettingsTable<Row> extends SettingsTableSpec<Row> {
  /** The organization's row, or a 404; `lock` takes a row lock (`update` to change it, `share` to write against it). */
  get(db: Executor, orgId: string, id: string, lock?: 'update' | 'share'): Promise<Row>;
  /**
   * A list tool's answer: the organization's rows whose name contains `search` (ignoring case), in
   * the asked sort (SETTINGS_SORT_FIELDS, id breaking ties) or newest first, one page of them
   * serialized, in the envelope under `key`.
   */
  list<K extends string, Out>(
    db: Executor,
    key: K,
    serialize: (row: Row) => Out,
    orgId: string,
    params: ListParams,
  ): Promise<PagedList<K, Out>>;
  /** Updates the row (found or not: a 404) and returns it. */
  write(db: Executor, orgId: string, id: string, set: Partial<Row>): Promise<Row>;
  /** Deletes the row for good. */
  remove(db: Executor, orgId: string, id: string): Promise<void>;
}

/** The sort fields of a settings table's list (give them to listParams). */
export const SETTINGS_SORT_FIELDS = ['name', 'created_at', 'updated_at'] as const;

export function defineSettingsTable<Row>(spec: SettingsTableSpec<Row>): SettingsTable<Row> {
  const c = spec.table;
  const own = (orgId: string, id: string) => and(eq(c.id, id), eq(c.orgId, orgId));
  const sortColumns: Record<(typeof SETTINGS_SORT_FIELDS)[number], SortColumn> = {
    name: sql`lower(${c.name})`,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
  return {
    ...spec,
    async get(db, orgId, id, lock) {
      const query = spec.select(db).where(own(orgId, id)).limit(1);
      const [row] = lock ? await query.for(lock) : await query;
      if (!row) throw notFound(spec.label);
      return row;
    },
    async list(db, key, serialize, orgId, params) {
      const conditions: SQL[] = [eq(c.orgId, orgId)];
      if (params.search) conditions.push(sql`${c.name} ilike ${`%${escapeLike(params.search)}%`}`);
      const order = sortOrder(params.sort, sortColumns, c.id, [desc(c.createdAt), desc(c.id)]);
      const { rows, total } = await selectPage(db, spec.table, spec.select(db), {
        where: and(...conditions),
        order,
        page: params,
      });
      return paged(key, rows.map(serialize), total, params);
    },
    async write(db, orgId, id, set) {
      const [row] = await spec.update(db, set, own(orgId, id));
      if (!row) throw notFound(spec.label);
      return row;
    },
    async remove(db, orgId, id) {
      await db.delete(spec.table).where(own(orgId, id));
    },
  };
}
